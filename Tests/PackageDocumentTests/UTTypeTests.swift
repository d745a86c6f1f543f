import Testing
@testable import PackageDocument

@Suite("UTType")
struct UTTypeTests {
    @Test("built-in types conform along the documented hierarchy")
    func hierarchy() {
        #expect(UTType.utf8PlainText.conforms(to: .plainText))
        #expect(UTType.utf8PlainText.conforms(to: .text) && UTType.utf8PlainText.conforms(to: .data))
        #expect(!UTType.plainText.conforms(to: .utf8PlainText))
        #expect(UTType.json.conforms(to: .text))
        #expect(UTType.jpeg.conforms(to: .image) && UTType.png.conforms(to: .data))
        #expect(UTType.zip.conforms(to: .archive) && UTType.zip.conforms(to: .data))
        #expect(UTType.pdf.conforms(to: .data) && UTType.pdf.conforms(to: .content))
        #expect(UTType.package.conforms(to: .directory) && !UTType.package.conforms(to: .data))
        #expect(UTType.mpeg4Movie.conforms(to: .movie))
        #expect(UTType.text.isSupertype(of: .json) && UTType.json.isSubtype(of: .text))
        #expect(!UTType.json.isSubtype(of: .json))
    }

    @Test("declared types: exported and imported, flat by default, packages when they say so")
    func declared() {
        let notebook = UTType(exportedAs: "com.example.notebook", conformingTo: .package, filenameExtension: "notebook")
        #expect(notebook.isPackage && notebook.isDeclared && notebook.conforms(to: .directory))
        let sheet = UTType(importedAs: "com.example.sheet")
        #expect(!sheet.isPackage && !sheet.isDeclared && sheet.conforms(to: .data))
        #expect(notebook == UTType(importedAs: "com.example.notebook"))
        #expect(notebook.description == "com.example.notebook")
    }

    @Test("lookups by identifier and filename extension")
    func lookups() {
        #expect(UTType("public.json") == .json)
        #expect(UTType("com.example.unknown") == nil)
        #expect(UTType(filenameExtension: "txt") == .plainText)
        #expect(UTType(filenameExtension: "JPG") == .jpeg)
        #expect(UTType(filenameExtension: "zip", conformingTo: .archive) == .zip)
        #expect(UTType(filenameExtension: "txt", conformingTo: .image) == nil)
    }
}
