// A command-line stand-in for an app whose new build cannot open the store its old build left:
// instead of deleting the store (and the user's data with it), the app rescues it first, resets,
// and merges the rescued records into the fresh store. `make test` runs it; it exits non-zero
// when anything rescued does not come back.
//
// What an app does is in `launch(store:rescues:)`: two calls of QuestBakKit's front door. What stands in
// for SwiftData (the old build's store, the new build's empty store, `ModelContainer`'s check
// of the store's model) is below it, written with the package's fixture writer.

import Foundation
import QuestBakFixtures
import QuestBakKit

// MARK: - The app's launch

/// The new build's launch: open the store; when that fails, rescue, reset, merge, open again.
func launch(store: URL, rescues: URL) async throws -> (QuestBak.RescueResult, QuestBak.RescueMergeResult)? {
    do {
        try ModelContainerStandIn.open(store, model: Journal.version2)
        return nil
    } catch let failure as ModelContainerStandIn.Failure {
        print("launch: \(failure.reason)")
    }
    // 1. Before anything is deleted: the store's files copied aside, and an archive made by the
    //    store's own model (not the app's, which cannot read it).
    let folder = rescues.appendingPathComponent("rescue-1")
    let rescued = try await QuestBak.rescue(store: store, into: folder)
    print("rescue: copied \(rescued.copiedFiles.count) files (\(rescued.copiedBytes) bytes) to \(folder.path)")
    guard rescued.exported else {
        // The copy is all there is: keep it, reset, and tell the user where it is.
        print("rescue: the export failed (\(rescued.exportFailure ?? "")); the files are kept")
        return nil
    }
    print("rescue: archive of model \(rescued.schemaVersion ?? "?"): \(rescued.records) records, verified")

    // 2. The reset the app would have done anyway: a fresh store with its own model.
    try ModelContainerStandIn.deleteStore(store)
    try ModelContainerStandIn.create(store, model: Journal.version2)

    // 3. The rescued records merged in (before the container opens the store for good).
    let merged = try await QuestBak.mergeRescue(from: folder, into: store)
    print("merge: \(merged.outcome.rawValue), \(merged.archiveSchemaVersion) → \(merged.storeSchemaVersion), \(merged.inserted) records")
    for value in merged.unplaced {
        print("merge: no place in the new model for \(value.entity) _pk \(value.primaryKey) \(value.field ?? "(record)") = \(value.value)")
    }
    try ModelContainerStandIn.open(store, model: Journal.version2)
    print("launch: the store opens")
    return (rescued, merged)
}

// MARK: - The journal app's two models (what SwiftData compiles from its @Model classes)

enum Journal {
    static func attribute(
        _ name: String, _ code: Int, _ valueClass: String, optional: Bool = false, default value: CompiledDefaultValue? = nil
    )
        -> CompiledAttribute
    {
        CompiledAttribute(
            name: name, typeCode: code, valueClassName: valueClass, isOptional: optional, defaultValue: value, renamingIdentifier: name)
    }

    static func model(_ version: String, entryAttributes: [CompiledAttribute]) -> CompiledModel {
        typealias Code = CompiledAttribute.TypeCode
        let entry = CompiledEntity(
            name: "Entry",
            attributes: (entryAttributes + [
                attribute("createdAt", Code.date, "NSDate", default: .date(secondsSince2001: 0)),
                attribute("text", Code.string, "NSString", optional: true),
                attribute("title", Code.string, "NSString", default: .string("")),
            ]).sorted { $0.name < $1.name },
            relationships: [
                CompiledRelationship(name: "notebook", destination: "Notebook", inverse: "entries", renamingIdentifier: "notebook")
            ],
            renamingIdentifier: "Entry")
        let notebook = CompiledEntity(
            name: "Notebook", attributes: [attribute("name", Code.string, "NSString", default: .string(""))],
            relationships: [
                CompiledRelationship(
                    name: "entries", destination: "Entry", inverse: "notebook", maxCount: 0, deleteRule: 2, isOptional: false,
                    renamingIdentifier: "entries")
            ],
            renamingIdentifier: "Notebook")
        return CompiledModel(versionIdentifiers: [version], entities: [entry, notebook])
    }

    /// 1.0.0: each entry has a mood.
    static let version1 = model(
        "1.0.0", entryAttributes: [attribute("mood", CompiledAttribute.TypeCode.int16, "NSNumber", default: .integer(0))])
    /// 2.0.0: moods are gone; entries can be pinned. The build ships no migration stage from
    /// 1.0.0, so its container refuses the old store.
    static let version2 = model(
        "2.0.0", entryAttributes: [attribute("pinned", CompiledAttribute.TypeCode.boolean, "NSNumber", default: .boolean(false))])

    /// What the old build's user wrote: two notebooks, five entries, the last still in the WAL.
    static let notebooks: [ModelRow] = [
        ModelRow("Notebook", 1, ["name": .text("Work")]),
        ModelRow("Notebook", 2, ["name": .text("Home")]),
    ]
    static let entries: [ModelRow] = [
        entry(1, "Standup", mood: 3, notebook: 1),
        entry(2, "Review", mood: 1, notebook: 1),
        entry(3, "Garden", mood: 5, notebook: 2),
        entry(4, "Groceries", mood: 2, notebook: 2),
    ]
    static let walEntries: [ModelRow] = [entry(5, "Late thought", mood: 4, notebook: nil)]

    static func entry(_ key: Int64, _ title: String, mood: Int64, notebook: Int64?) -> ModelRow {
        var values: [String: FixtureValue] = [
            "title": .text(title), "text": .text("\(title), written with build 1"), "mood": .integer(mood),
            "createdAt": .real(800_000_000 + Double(key) * 86_400),
        ]
        if let notebook { values["notebook"] = .integer(notebook) }
        return ModelRow("Entry", key, values)
    }
}

// MARK: - Stand-ins for SwiftData

enum ModelContainerStandIn {
    struct Failure: Error {
        var reason: String
    }

    /// As `ModelContainer` refuses a store whose model it has no migration from: the store's
    /// model (its Z_MODELCACHE) must hash as the build's does.
    static func open(_ store: URL, model: CompiledModel) throws {
        let storeModel = try CompiledModel.model(ofStoreAt: store)
        guard ModelVersionHashes(model: storeModel) == ModelVersionHashes(model: model) else {
            throw Failure(
                reason: "ModelContainer: the model used to open the store (\(model.versionIdentifiers.joined())) is incompatible "
                    + "with the one used to create it (\(storeModel.versionIdentifier))")
        }
    }

    static func create(_ store: URL, model: CompiledModel, rows: [ModelRow] = [], walRows: [ModelRow] = []) throws {
        var contents = ModelStore(model: model, uuid: UUID().uuidString, rows: rows)
        contents.walRows = walRows
        try ModelStoreWriter.write(contents, to: store)
    }

    static func deleteStore(_ store: URL) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.removeItem(atPath: store.path + suffix)
        }
    }
}

// MARK: - The run, checked

var failures: [String] = []
@MainActor func check(_ condition: Bool, _ what: String) {
    if !condition { failures.append(what) }
}

let work = try TemporaryDirectory.create(prefix: "rescue-before-reset")
let store = work.appendingPathComponent("Application Support/default.store")
try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
// The old build's store, with its last entry only in the WAL (the app was killed, as apps are).
try ModelContainerStandIn.create(store, model: Journal.version1, rows: Journal.notebooks + Journal.entries, walRows: Journal.walEntries)

if let outcome = try await launch(store: store, rescues: work.appendingPathComponent("Application Support/Rescues")) {
    let (rescued, merged) = outcome
    let entries = Journal.entries.count + Journal.walEntries.count
    check(rescued.copiedFiles.contains { $0.lastPathComponent == "default.store-wal" }, "the copy has the store's -wal")
    check(rescued.entities == ["Entry": entries, "Notebook": Journal.notebooks.count], "the archive has \(rescued.entities)")
    check(merged.outcome == .migratedAndMerged, "the 1.0.0 archive was migrated to 2.0.0 (\(merged.outcome))")
    check(merged.inserted == entries + Journal.notebooks.count, "every record merged (\(merged.inserted))")
    let moods = merged.unplaced.filter { $0.entity == "Entry" && $0.field == "mood" }
    check(moods.count == entries && merged.unplaced.count == entries, "every mood reported, nothing else (\(merged.unplaced))")
    check(
        Set(moods.map(\.value))
            == Set(
                (Journal.entries + Journal.walEntries).compactMap { row -> String? in
                    guard case .integer(let mood)? = row.values["mood"] else { return nil }
                    return "\(mood)"
                }), "the reported moods are the old build's (\(moods.map(\.value)))")
    // The merged store read back by a backup of it: the records are there under the new model.
    let backup = work.appendingPathComponent("after.qbak")
    var options = QuestBak.BackupOptions()
    options.createdAt = Date(timeIntervalSince1970: 1_800_000_000)
    options.verify = true
    let summary = try await QuestBak.backUp(store: store, to: backup, options: options)
    let counts = Dictionary(summary.entities.map { ($0.name, $0.count) }, uniquingKeysWith: +)
    check(counts == ["Entry": entries, "Notebook": Journal.notebooks.count], "the merged store holds \(counts)")
    check(summary.schemaVersion == "2.0.0", "the merged store is of model \(summary.schemaVersion)")
} else {
    failures.append("the launch did not rescue and merge")
}

TemporaryDirectory.remove(work)
if failures.isEmpty {
    print("rescue before reset: every record rescued and merged, every value without a place reported")
} else {
    for failure in failures { print("MISMATCH: \(failure)") }
    exit(1)
}
