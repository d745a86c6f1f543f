// Runs the document samples for tests that measure from outside the test process:
//   pkgdoc-demo media BYTES DEST                       stream a payload, print a JSON report
//   pkgdoc-demo counter PATH ROUNDS LABEL HOLD_MS LOG  save a flat document ROUNDS times
//   pkgdoc-demo notebook-make PATH PAGES               make a notebook
//   pkgdoc-demo notebook-saves PATH ROUNDS LABEL       save a notebook ROUNDS times
//   pkgdoc-demo notebook-first-page PATH               print the first page
//   pkgdoc-demo cancel-package BYTES DEST MS|writing   cancel a package save MS ms into it (or once
//                                                      the engine writes), print a JSON report
import Foundation
import PackageDocumentExamples

@MainActor
func run(_ arguments: [String]) async throws {
    switch arguments.first {
    case "media" where arguments.count == 3:
        let report = try await DocumentDemos.streamMedia(payloadBytes: Int(arguments[1])!, to: arguments[2])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    case "counter" where arguments.count == 6:
        try await DocumentDemos.counterSaves(
            path: arguments[1], rounds: Int(arguments[2])!, label: arguments[3], holdMilliseconds: Int(arguments[4])!,
            log: arguments[5])
    case "notebook-make" where arguments.count == 3:
        try await DocumentDemos.makeNotebook(at: arguments[1], pages: Int(arguments[2])!)
    case "notebook-saves" where arguments.count == 4:
        try await DocumentDemos.notebookSaves(path: arguments[1], rounds: Int(arguments[2])!, label: arguments[3])
    case "cancel-package" where arguments.count == 4:
        let point: DocumentDemos.CancelPoint =
            arguments[3] == "writing" ? .whileWriting : .after(.milliseconds(Int(arguments[3])!))
        let report = try await DocumentDemos.cancelPackageSave(
            payloadBytes: Int(arguments[1])!, to: arguments[2], at: point)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    case "notebook-first-page" where arguments.count == 2:
        print(try await DocumentDemos.notebookFirstPage(at: arguments[1]))
    default:
        FileHandle.standardError.write(Data("usage: see the comment at the top of Examples/pkgdoc-demo/main.swift\n".utf8))
        exit(2)
    }
}

do {
    try await run(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("pkgdoc-demo: \(error)\n".utf8))
    exit(1)
}
