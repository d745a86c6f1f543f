// The code of the article "Writing a document app" (PackageDocument.docc), compiled and run,
// with BoardDocument.swift (the document type) and main.swift (open, edit, save).
import Foundation
import PackageDocument

/// Undoable edits, autosave, save as, export as a ZIP archive, and a failed save.
@MainActor
func guideDocumentSession(in folder: URL) async throws -> [String] {
    var log: [String] = []
    let session = try await DocumentSession.create { _, _ in BoardDocument() }

    // An edit registered with the undo manager counts as a change: autosave sees it.
    let board = session.document
    board.cards["1.txt"] = "buy milk"
    session.undoManager.registerUndo(withTarget: board) { board in board.cards["1.txt"] = nil }
    session.undoManager.setActionName("Add Card")
    log.append("unsaved changes: \(session.hasUnsavedChanges)")

    // Save as: the document lives at that URL from now on.
    let url = folder.appendingPathComponent("Groceries.board")
    try await session.save(to: url)
    log.append("files written: \(session.lastSaveStatistics?.filesWritten ?? 0)")

    // Autosave a moment after the last change; a burst of edits is saved once.
    session.startAutosaving(after: .milliseconds(200))
    board.cards["2.txt"] = "bread"
    session.updateChangeCount(.done)

    // A copy as a ZIP archive: the package is packed; the document stays where it is.
    try await session.export(to: folder.appendingPathComponent("Groceries.zip"), contentType: .zip)

    // A save that fails throws a DocumentError and keeps the edits unsaved.
    do {
        try await session.save(to: URL(fileURLWithPath: "/nonexistent/folder/Groceries.board"))
    } catch let error as DocumentError {
        log.append(error.description)  // cannot save '/nonexistent/…': …
        log.append("still unsaved: \(session.hasUnsavedChanges)")
    }
    session.stopAutosaving()
    try await session.save()
    return log
}
