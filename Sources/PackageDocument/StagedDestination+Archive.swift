import PackageZip

extension StagedDestination {
    /// Packs the staged package as the ZIP archive `archivePath` (Specs/zip.md: `.pkgtool`
    /// is never archived), which replaces what is there atomically, then removes the staged
    /// folder: what an export as `.zip` leaves is the archive and nothing else.
    ///
    /// - Complexity: one read of every staged file, compressed on all cores; one archive
    ///   written (fsynced with `.full`) and renamed into place.
    /// A raised `cancellation` stops the packing before its next entry; the archive is then
    /// left as it was.
    func packAsArchive(at archivePath: String, durability: Durability, cancellation: SaveCancellation? = nil) throws {
        precondition(shape == .package, "only a staged package is packed")
        _ = try ZipPacker.pack(
            destinationPath, to: archivePath, options: ZipPackOptions(durability: durability, cancellation: cancellation))
        discard()
    }
}
