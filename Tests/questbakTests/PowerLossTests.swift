import Foundation
import QuestBakTestSupport
import XCTest

/// Power loss at every point of a run (issue #14; docs/reliability.md, "Power loss"): the
/// recorder logs every file-system operation, the replayer builds each state POSIX allows a
/// crash to leave, and each must hold the old data or the complete new data. This is the quick
/// part, sampled; `make crash-campaign` (QUESTBAK_CRASH_CAMPAIGN=1) runs the exhaustive one.
final class PowerLossTests: XCTestCase {
    static var campaign: Bool { ProcessInfo.processInfo.environment["QUESTBAK_CRASH_CAMPAIGN"] == "1" }

    /// Quick: exhaustive up to 2^5 states a prefix, 4 seeded ones beyond, at most 24 second runs
    /// (about 15 s of one core); the campaign: exhaustive up to 2^8 states a prefix, 48 seeded
    /// ones beyond, a second run for every distinct state of the target and the names.
    var harness: PowerLossHarness {
        Self.campaign
            ? PowerLossHarness(exhaustiveLimit: 8, samples: 48, seed: 14)
            : PowerLossHarness(exhaustiveLimit: 5, samples: 4, seed: 14, rerunLimit: 24)
    }

    func explore(_ name: String, minimumOperations: Int, outcomes expected: [String]) throws {
        let command = try XCTUnwrap(PowerLossCommand.all.first { $0.name == name })
        let report = try harness.run(command)
        print("power loss: \(report)")
        XCTAssertEqual(report.failures, [], "\(report.failures.prefix(10).joined(separator: "\n"))")
        XCTAssertGreaterThanOrEqual(report.operations, minimumOperations, "\(report)")
        XCTAssertGreaterThan(report.reruns, 0)
        for outcome in expected { XCTAssertGreaterThan(report.outcomes[outcome] ?? 0, 0, "no state was \(outcome): \(report)") }
        if Self.campaign, let output = ProcessInfo.processInfo.environment["QUESTBAK_CRASH_REPORT"] {
            let line =
                "| \(command.name) | \(report.operations) | \(report.exhaustivePrefixes) / \(report.sampledPrefixes) | \(report.states) | "
                + "\(report.distinctStates) | \(report.reruns) | \(report.failures.count) |\n"
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            handle.seekToEndOfFile()
            handle.write(Data(line.utf8))
            try handle.close()
        }
    }

    /// The commands with a test of their own below; any other entry of `PowerLossCommand.all`
    /// (merge, when it lands) is checked by `testEveryOtherCommandLeavesTheOldOrTheNewData`.
    static let commandsWithTheirOwnTest = [
        "export", "import --into", "import --into (new folders)", "import --into (external storage)", "import --replace (live WAL)",
        "import --replace (no WAL)", "migrate --in-place",
    ]

    func testEveryOtherCommandLeavesTheOldOrTheNewData() throws {
        for command in PowerLossCommand.all where !Self.commandsWithTheirOwnTest.contains(command.name) {
            let done: String
            if case .archive = command.output { done = "complete archive" } else { done = "new" }
            try explore(command.name, minimumOperations: 5, outcomes: [done])
        }
    }

    func testExportLeavesNoArchiveOrTheCompleteOne() throws {
        try explore("export", minimumOperations: 5, outcomes: ["no archive", "complete archive"])
    }

    func testImportIntoLeavesNoStoreOrTheCompleteOne() throws {
        try explore("import --into", minimumOperations: 20, outcomes: ["absent", "new"])
    }

    func testImportIntoNewFoldersLeavesNoStoreOrTheCompleteOne() throws {
        try explore("import --into (new folders)", minimumOperations: 20, outcomes: ["absent", "new"])
    }

    func testImportIntoWithExternalStorageLeavesNoStoreOrTheCompleteOne() throws {
        try explore("import --into (external storage)", minimumOperations: 20, outcomes: ["absent", "new"])
    }

    func testImportReplaceWithALiveWALLeavesTheOldOrTheNewStore() throws {
        try explore("import --replace (live WAL)", minimumOperations: 100, outcomes: ["old, byte for byte", "new"])
    }

    func testImportReplaceWithoutAWALLeavesTheOldOrTheNewStore() throws {
        try explore("import --replace (no WAL)", minimumOperations: 50, outcomes: ["old, byte for byte", "new"])
    }

    func testMigrateInPlaceLeavesTheOldOrTheNewStore() throws {
        try explore("migrate --in-place", minimumOperations: 50, outcomes: ["old, byte for byte", "new"])
    }

    /// The replayer finds the classic bug: a file renamed over another before its bytes were
    /// fsynced can be found under the final name, empty.
    func testTheReplayerFindsARenameOfUnsyncedData() {
        let recording = CrashRecording(
            operations: [
                .existing(file: 1, path: "target"), .create(file: 2, path: "temporary"), .syncDirectory(path: "."),
                .write(file: 2, offset: 0, length: 3, dataOffset: 0), .rename(from: "temporary", to: "target"),
                .syncDirectory(path: "."),
            ],
            data: Array("new".utf8), initial: ["target": Array("old".utf8)])
        let explorer = CrashStateExplorer(recording: recording, exhaustiveLimit: 8, samples: 0, seed: 1)
        var targets: Set<[UInt8]> = []
        explorer.forEachState { _, state in targets.insert(state["target"] ?? []) }
        XCTAssertEqual(targets, [Array("old".utf8), Array("new".utf8), []])

        // With the fsync the rename waits for, the empty file is gone.
        var synced = recording
        synced.operations.insert(.sync(file: 2), at: 4)
        targets = []
        CrashStateExplorer(recording: synced, exhaustiveLimit: 8, samples: 0, seed: 1).forEachState { _, state in
            targets.insert(state["target"] ?? [])
        }
        XCTAssertEqual(targets, [Array("old".utf8), Array("new".utf8)])
    }

    /// A rename not followed by a directory fsync may be lost, an unlink too, each on its own.
    func testUnsyncedRenamesAndUnlinksMayEachBeLost() {
        let recording = CrashRecording(
            operations: [
                .existing(file: 1, path: "store"), .existing(file: 2, path: "store-wal"), .existing(file: 3, path: "new"),
                .unlink(path: "store-wal"), .rename(from: "new", to: "store"),
            ],
            data: [], initial: ["store": [1], "store-wal": [2], "new": [3]])
        var names: Set<[String]> = []
        CrashStateExplorer(recording: recording, exhaustiveLimit: 8, samples: 0, seed: 1).forEachState { prefix, state in
            if prefix == 5 { names.insert(state.keys.sorted() + ["store=\(state["store"] ?? [])"]) }
        }
        XCTAssertEqual(
            names,
            [
                ["new", "store", "store-wal", "store=[1]"], ["new", "store", "store=[1]"], ["store", "store-wal", "store=[3]"],
                ["store", "store=[3]"],
            ])
    }
}

/// The bugs the power-loss harness found, each on the exact state that showed it.
final class PowerLossRegressionTests: XCTestCase {
    /// Found by the campaign: `StorePlacement.place` renamed the new store over the old one while
    /// SQLite's removal of the old, checkpointed `-wal` was not yet durable (nothing had synced
    /// the folder), so a power loss could keep the rename and lose the unlink and the WAL's
    /// truncation: the old WAL beside the new main file, replayed into it by the next open
    /// (import --replace: neither the old nor the new data; migrate --in-place: malformed).
    func testTheNewStoreNeverMeetsTheOldWAL() throws {
        for name in ["import --replace (live WAL)", "migrate --in-place"] {
            let command = try XCTUnwrap(PowerLossCommand.all.first { $0.name == name })
            let work = try PowerLossHarness.workDirectory()
            defer { try? FileManager.default.removeItem(at: work) }
            let harness = PowerLossHarness(exhaustiveLimit: 8, samples: 32)
            let recording = try harness.record(command, in: work)
            let explorer = CrashStateExplorer(recording: recording, exhaustiveLimit: 8, samples: 32, seed: 14)
            let renamed = try XCTUnwrap(
                recording.operations.lastIndex { if case .rename(_, "default.store") = $0 { return true } else { return false } })
            let newStore = explorer.finalState["default.store"]
            var placed = 0
            explorer.forEachState { prefix, state in
                guard prefix > renamed, state["default.store"] == newStore else { return }
                placed += 1
                XCTAssertTrue(
                    (state["default.store-wal"] ?? []).isEmpty,
                    "\(name), after operation \(prefix): the new store beside a WAL of \(state["default.store-wal"]?.count ?? 0) bytes")
            }
            XCTAssertGreaterThan(placed, 0, name)
        }
    }

    /// Found by the quick part: `import --into` linked its store into place and then removed its
    /// temporary name; a crash between the two left the temporary files, and the next run
    /// refused the existing target before removing what a dead run had left.
    func testARunAfterACrashBetweenLinkAndUnlinkRemovesTheTemporaryFiles() throws {
        let command = try XCTUnwrap(PowerLossCommand.all.first { $0.name == "import --into" })
        let work = try PowerLossHarness.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let harness = PowerLossHarness(exhaustiveLimit: 0, samples: 0)
        let recording = try harness.record(command, in: work)
        let linked = try XCTUnwrap(
            recording.operations.firstIndex { if case .link(_, "default.store") = $0 { return true } else { return false } })
        let state = CrashStateExplorer(recording: recording, exhaustiveLimit: 0, samples: 0, seed: 0).state(prefix: linked + 1, fates: [:])
        XCTAssertTrue(state.keys.contains { $0.hasPrefix(".default.store.questbak-") }, "\(state.keys.sorted())")
        let (outcome, problems) = try harness.check(state, of: command, recording: recording, in: work)
        XCTAssertEqual(outcome, "new")
        XCTAssertEqual(problems, [])
    }

    /// Found by the check that a finished command is durable: `import --into` a store in folders
    /// it creates synced only the innermost folder, so a power loss after the run had succeeded
    /// could take the new folders, and the store in them, away.
    func testFoldersAnImportCreatedOutliveAPowerLossAfterIt() throws {
        let command = try XCTUnwrap(PowerLossCommand.all.first { $0.name == "import --into (new folders)" })
        let work = try PowerLossHarness.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let recording = try PowerLossHarness(exhaustiveLimit: 0, samples: 0).record(command, in: work)
        let explorer = CrashStateExplorer(recording: recording, exhaustiveLimit: 0, samples: 0, seed: 0)
        let end = recording.operations.count
        let everythingLost = Dictionary(uniqueKeysWithValues: explorer.volatile(prefix: end).map { ($0, CrashStateExplorer.Fate.lost) })
        let state = explorer.state(prefix: end, fates: everythingLost)
        XCTAssertNotNil(explorer.finalState[command.target])
        XCTAssertTrue(
            state[command.target] == explorer.finalState[command.target], "a power loss after the run leaves \(state.keys.sorted())")
    }

    /// Found by the quick part: an import wrote a store's external-storage files durably but not
    /// the entry of their support folder in the store's folder, so a power loss could keep the
    /// store, just linked into place, and lose the folder its records point into.
    func testTheNewStoreNeverLacksItsExternalStorage() throws {
        let command = try XCTUnwrap(PowerLossCommand.all.first { $0.name == "import --into (external storage)" })
        let work = try PowerLossHarness.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let harness = PowerLossHarness(exhaustiveLimit: 0, samples: 0)
        let recording = try harness.record(command, in: work)
        let explorer = CrashStateExplorer(recording: recording, exhaustiveLimit: 0, samples: 0, seed: 0)
        let linked = try XCTUnwrap(
            recording.operations.firstIndex { if case .link(_, "default.store") = $0 { return true } else { return false } })
        // Everything not yet durable lost, but the link.
        let fates = Dictionary(
            uniqueKeysWithValues: explorer.volatile(prefix: linked + 1).filter { $0 != linked }.map { ($0, CrashStateExplorer.Fate.lost) })
        let state = explorer.state(prefix: linked + 1, fates: fates)
        XCTAssertNotNil(state["default.store"])
        XCTAssertTrue(explorer.finalState.keys.contains { $0.contains("_EXTERNAL_DATA/") && !$0.hasSuffix("/") })
        let (outcome, problems) = try harness.check(state, of: command, recording: recording, in: work)
        XCTAssertEqual(outcome, "new")
        XCTAssertEqual(problems, [])
    }
}
