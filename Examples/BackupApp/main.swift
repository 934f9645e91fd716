// An app's use of QuestBakKit, with a plain import and public symbols only (the target has no
// package access): back up the app's store, prove the backup restores, restore it on a new
// device, and merge it into a device that has data of its own. `make test` runs it:
//
//     swift run questbak-example [FIXTURES_FOLDER]
//
// The "app's store" is a copy of the bundled fixture Fixtures/AnyApp/kitchen-sink, whose -wal
// holds the last session's records: the store without its -wal stands for a second device that
// has not seen them yet.
import Foundation
import QuestBakKit

let fixtures =
    CommandLine.arguments.dropFirst().first.map { URL(fileURLWithPath: $0) }
    ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fixtures").standardizedFileURL
let kitchenSink = fixtures.appendingPathComponent("AnyApp/kitchen-sink/default.store")

/// Stops the example with a message and a failing status.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("questbak-example: \(message)\n".utf8))
    exit(1)
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("questbak-example-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }

/// Copies the fixture store into `name/default.store`, with its -wal and -shm or without them.
func makeStore(_ name: String, withWAL: Bool) throws -> URL {
    let store = folder.appendingPathComponent(name).appendingPathComponent("default.store")
    try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
    for suffix in withWAL ? ["", "-wal", "-shm"] : [""] {
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: kitchenSink.path + suffix), to: URL(fileURLWithPath: store.path + suffix))
    }
    return store
}

do {
    let appStore = try makeStore("App", withWAL: true)
    let backup = folder.appendingPathComponent("backup.qbak")

    // Back up, verified before the archive is put in place; progress arrives on the export's threads.
    var options = QuestBak.BackupOptions()
    options.verify = true
    let summary = try await QuestBak.backUp(store: appStore, to: backup, options: options) { progress in
        if progress.rowsDone == progress.rowsTotal { print("  backed up \(progress.entity): \(progress.rowsDone) records") }
    }
    print("backup: \(summary.entities.count) entities, \(summary.archiveBytes ?? 0) bytes, verified: \(summary.verification != nil)")

    // A second backup to the same file is refused: an app switches on the error's category.
    do {
        try await QuestBak.backUp(store: appStore, to: backup)
        fail("a second backup replaced the first without `overwrite`")
    } catch {
        guard error.category == .outputExists else { fail("\(error.category): \(error.message)") }
        print("second backup refused: \(error.message)")
    }

    // Prove the archive restores, without keeping anything.
    let verification = try await QuestBak.verify(archive: backup)
    guard verification.restoresExactly else { fail("the backup does not restore exactly: \(verification.counts)") }
    print("verify: restores exactly (\(verification.entities.count) entities)")

    // Restore on a new device.
    let newDevice = folder.appendingPathComponent("NewDevice/default.store")
    let restored = try await QuestBak.restore(archive: backup, into: newDevice)
    print("restore: \(restored.entities.map(\.written).reduce(0, +)) records, \(restored.repairs) repairs")
    let difference = try await QuestBak.diff(appStore, newDevice)
    guard difference.isEmpty else { fail("the restored store differs from the app's: \(difference.changed) changed") }

    // Merge into a device that has its own data but not the last session's records.
    let otherDevice = try makeStore("OtherDevice", withWAL: false)
    let merged = try await QuestBak.merge(archive: backup, into: otherDevice)
    let inserted = merged.entities.map(\.inserted).reduce(0, +)
    guard inserted > 0, !merged.unchanged else { fail("the merge inserted nothing") }
    print("merge: \(inserted) records inserted, previous store kept as \(merged.backup?.path ?? "none")")
} catch let error as QuestBakError {
    fail("\(error.category): \(error.message)")
} catch {
    fail("\(error)")
}
