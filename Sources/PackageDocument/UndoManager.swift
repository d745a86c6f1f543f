/// Records undo and redo actions, in the shape of Foundation's `UndoManager` (which Linux
/// lacks), and tells the host about each change so that autosave knows when the document
/// has unsaved changes — the guide's "undo registration is required for autosave".
///
/// One action per registration (no grouping). The target is held weakly, as Apple's. Use
/// it from the main actor, where the host and the document live: the host's change count
/// is updated synchronously from each registration.
public final class UndoManager {
    private struct Action {
        weak var target: AnyObject?
        var name: String
        var perform: (AnyObject) -> Void
    }

    private var undoStack: [Action] = []
    private var redoStack: [Action] = []
    private var pendingName = ""

    /// Whether `undo()` is running (a registration then goes to the redo stack).
    public private(set) var isUndoing = false
    /// Whether `redo()` is running (a registration then goes to the undo stack).
    public private(set) var isRedoing = false

    /// The most actions kept; 0 for no limit.
    public var levelsOfUndo = 0

    /// Called after each registered change, undo and redo (the host's change count).
    var onChange: ((DocumentChange) -> Void)?

    /// An undo manager with nothing to undo.
    public init() {}

    /// Registers `handler` to undo the change just made to `target`. Called while undoing,
    /// it registers the redo action instead; calling it again with the reverse change from
    /// inside the handler gives redo for free.
    public func registerUndo<Target: AnyObject>(
        withTarget target: Target, handler: @escaping (Target) -> Void
    ) {
        let action = Action(target: target, name: pendingName) { object in
            if let typed = object as? Target { handler(typed) }
        }
        if isUndoing {
            redoStack.append(action)
        } else {
            undoStack.append(action)
            if !isRedoing {
                redoStack.removeAll()
                onChange?(.done)
            }
            if levelsOfUndo > 0 && undoStack.count > levelsOfUndo { undoStack.removeFirst() }
        }
    }

    /// Names the action just registered ("Edit", "Delete Page").
    public func setActionName(_ actionName: String) {
        pendingName = actionName
        if isUndoing, !redoStack.isEmpty {
            redoStack[redoStack.count - 1].name = actionName
        } else if !undoStack.isEmpty {
            undoStack[undoStack.count - 1].name = actionName
        }
    }

    /// Whether there is a change to undo.
    public var canUndo: Bool { !undoStack.isEmpty }
    /// Whether there is an undone change to redo.
    public var canRedo: Bool { !redoStack.isEmpty }
    /// The name of the change `undo()` would undo ("" when unnamed or none).
    public var undoActionName: String { undoStack.last?.name ?? "" }
    /// The name of the change `redo()` would redo ("" when unnamed or none).
    public var redoActionName: String { redoStack.last?.name ?? "" }

    /// Undoes the last change.
    public func undo() {
        guard let action = undoStack.popLast() else { return }
        isUndoing = true
        if let target = action.target { action.perform(target) }
        isUndoing = false
        onChange?(.undone)
    }

    /// Redoes the last undone change.
    public func redo() {
        guard let action = redoStack.popLast() else { return }
        isRedoing = true
        if let target = action.target { action.perform(target) }
        isRedoing = false
        onChange?(.redone)
    }

    /// Forgets every action.
    public func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
    }
}

/// A change to a document's content, for its change count.
public enum DocumentChange: Sendable {
    /// An edit: one more unsaved change.
    case done
    /// An edit undone: one fewer.
    case undone
    /// An undone edit redone: one more.
    case redone
    /// The document matches its file again (after a save or revert).
    case cleared
}
