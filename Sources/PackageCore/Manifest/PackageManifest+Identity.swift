extension PackageManifest {
    /// The package identity (root inode) and root hash recorded by the manifest in the
    /// metadata directory `metadata`, from the files' headers alone: the base's, or the last
    /// delta's of the chain that applies to it (deltas of an older base are ignored, as
    /// `load` does).
    ///
    /// Whether a folder is a package asks this (`PackageLayout.isForeignFolder`): a
    /// manifest names the package it was written for, so an empty `.pkgtool`, or one holding
    /// a manifest copied from elsewhere into a folder it does not describe, does not make a
    /// folder a package.
    /// - Returns: nil when there is no readable index; an identity of 0 when it predates
    ///   identities.
    /// - Complexity: one listing; per file one `openat`, one `fstat` and two `pread`s of at
    ///   most 112 bytes; no entry is decoded.
    package static func recordedState(
        inMetadataDirectory metadata: borrowing FileDescriptor
    ) -> (identity: UInt64, rootHash: ContentHash)? {
        guard let index = header(PackageLayout.indexFileName, in: metadata, size: ManifestFormat.indexHeaderSize),
            Array(index.bytes[0..<8]) == ManifestFormat.indexMagic
        else { return nil }
        let indexVersion = word32(index.bytes, at: 8)
        var identity = indexVersion >= 2 ? word64(index.bytes, at: 56) : 0
        var rootHash = hash(index.bytes, at: 24)
        let base = index.checksum
        var previous = [UInt8](repeating: 0, count: ManifestFormat.checksumSize)
        var sequence: UInt64 = 0
        var deltas: [(sequence: UInt64, name: String)] = []
        for name in (try? DirectoryListing.names(in: metadata)) ?? [] {
            if let number = PackageLayout.deltaSequence(name) { deltas.append((number, name)) }
        }
        for (number, name) in deltas.sorted(by: { $0.sequence < $1.sequence }) {
            guard let delta = header(name, in: metadata, size: ManifestFormat.deltaHeaderSize),
                Array(delta.bytes[0..<8]) == ManifestFormat.deltaMagic
            else { break }
            guard Array(delta.bytes[24..<40]) == base else { continue }  // an older base's
            guard number == sequence + 1, word64(delta.bytes, at: 16) == number, Array(delta.bytes[40..<56]) == previous
            else { break }
            identity = word32(delta.bytes, at: 8) >= 2 ? word64(delta.bytes, at: 104) : 0
            rootHash = hash(delta.bytes, at: 56)
            previous = delta.checksum
            sequence = number
        }
        return (identity, rootHash)
    }

    private static func hash(_ bytes: [UInt8], at offset: Int) -> ContentHash {
        bytes[offset..<offset + 16].withUnsafeBytes { ContentHash(canonicalBytes: $0) }
    }

    /// The first `size` bytes of a manifest file and its trailing checksum; nil when it is
    /// missing, not a regular file, or too short.
    private static func header(_ name: String, in directory: borrowing FileDescriptor, size: Int)
        -> (bytes: [UInt8], checksum: [UInt8])?
    {
        guard
            let file = try? FileDescriptor.open(
                name, relativeTo: directory.rawValue, options: [.noFollow, .nonBlocking], displayPath: name),
            let status = try? file.status(), status.kind == .regular,
            status.size >= Int64(size + ManifestFormat.checksumSize)
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        var checksum = [UInt8](repeating: 0, count: ManifestFormat.checksumSize)
        guard (try? bytes.withUnsafeMutableBytes { try file.readFully(into: $0, at: 0) }) == size,
            (try? checksum.withUnsafeMutableBytes {
                try file.readFully(into: $0, at: status.size - Int64(ManifestFormat.checksumSize))
            }) == ManifestFormat.checksumSize
        else { return nil }
        return (bytes, checksum)
    }

    private static func word32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private static func word64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
}
