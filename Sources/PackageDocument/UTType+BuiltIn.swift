extension UTType {
    /// The root of every type.
    public static let item = UTType(builtIn: "public.item", conformingTo: [])
    /// Content a person reads or edits (text, images, media).
    public static let content = UTType(builtIn: "public.content", conformingTo: [.item])
    /// Content made of several parts (a PDF, a presentation).
    public static let compositeContent = UTType(builtIn: "public.composite-content", conformingTo: [.content])
    /// A flat stream of bytes: what every single-file document conforms to.
    public static let data = UTType(builtIn: "public.data", conformingTo: [.item])
    /// A directory.
    public static let directory = UTType(builtIn: "public.directory", conformingTo: [.item])
    /// A directory a person browses into.
    public static let folder = UTType(builtIn: "public.folder", conformingTo: [.directory])
    /// A directory shown as one document: what every package document conforms to.
    public static let package = UTType(builtIn: "com.apple.package", conformingTo: [.directory])
    /// Text of any encoding and markup.
    public static let text = UTType(builtIn: "public.text", conformingTo: [.data, .content])
    /// Text without markup, of an encoding not stated.
    public static let plainText = UTType(builtIn: "public.plain-text", conformingTo: [.text], filenameExtension: "txt")
    /// Plain text in UTF-8.
    public static let utf8PlainText = UTType(builtIn: "public.utf8-plain-text", conformingTo: [.plainText])
    /// JSON.
    public static let json = UTType(builtIn: "public.json", conformingTo: [.text], filenameExtension: "json")
    /// Images of any format.
    public static let image = UTType(builtIn: "public.image", conformingTo: [.data, .content])
    /// JPEG images.
    public static let jpeg = UTType(builtIn: "public.jpeg", conformingTo: [.image], filenameExtension: "jpeg")
    /// PNG images.
    public static let png = UTType(builtIn: "public.png", conformingTo: [.image], filenameExtension: "png")
    /// PDF documents.
    public static let pdf = UTType(builtIn: "com.adobe.pdf", conformingTo: [.data, .compositeContent], filenameExtension: "pdf")
    /// Archives of any format.
    public static let archive = UTType(builtIn: "public.archive", conformingTo: [.data])
    /// ZIP archives: what a package flattens to for export.
    public static let zip = UTType(builtIn: "public.zip-archive", conformingTo: [.archive], filenameExtension: "zip")
    /// Audio and video.
    public static let audiovisualContent = UTType(builtIn: "public.audiovisual-content", conformingTo: [.data, .content])
    /// Video with or without audio.
    public static let movie = UTType(builtIn: "public.movie", conformingTo: [.audiovisualContent])
    /// MPEG-4 movies.
    public static let mpeg4Movie = UTType(builtIn: "public.mpeg-4", conformingTo: [.movie], filenameExtension: "mp4")

    /// Every built-in type, for lookups by identifier or extension.
    static let builtIns: [UTType] = [
        .item, .content, .compositeContent, .data, .directory, .folder, .package, .text, .plainText,
        .utf8PlainText, .json, .image, .jpeg, .png, .pdf, .archive, .zip, .audiovisualContent, .movie, .mpeg4Movie,
    ]
}
