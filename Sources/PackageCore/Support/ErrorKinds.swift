/// An error meaning the input was examined and refused (a corrupt or hostile archive, a
/// damaged manifest, a failed verification): the CLI's exit status 1, as opposed to
/// trouble doing the work at all (a missing path, an I/O error: exit status 2).
public protocol InputRejectedError: Error, CustomStringConvertible {}
