import Crypto
import Foundation
import GRDB

/// A command the power-loss harness runs: adding one (merge, say) is adding one of these to
/// `PowerLossCommand.all`.
public struct PowerLossCommand: Sendable {
    public enum Output: Sendable {
        /// A store that replaces an old one (`replaces`) or appears where there was none.
        case store(replaces: Bool)
        /// A file that must appear complete or not at all.
        case archive
    }

    public var name: String
    /// The fixture folder copied into the recorded folder before the run; nil leaves it empty.
    public var fixture: String?
    /// The file the command writes, relative to the recorded folder.
    public var target: String
    public var output: Output
    /// The command's arguments, given the work directory, whose folder `app` is the recorded one.
    public var arguments: @Sendable (URL) -> [String]
    /// Makes what the command reads from outside the recorded folder (an archive to import).
    public var prepare: @Sendable (URL) throws -> Void
    /// What a second run may answer instead of succeeding once the target is the new one
    /// (`migrate` refuses a store already at the version).
    public var refusalsWhenDone: [String]

    public init(
        name: String, fixture: String?, target: String = "default.store", output: Output, refusalsWhenDone: [String] = [],
        prepare: @escaping @Sendable (URL) throws -> Void = { _ in }, arguments: @escaping @Sendable (URL) -> [String]
    ) {
        self.name = name
        self.fixture = fixture
        self.target = target
        self.output = output
        self.refusalsWhenDone = refusalsWhenDone
        self.prepare = prepare
        self.arguments = arguments
    }

    /// An archive of Fixtures/v1-typical beside the recorded folder, for the imports.
    @Sendable static func exportTypical(_ work: URL) throws {
        let result = try Questbak.run([
            "export", Repository.fixtures.appendingPathComponent("v1-typical/default.store").path, "-o",
            work.appendingPathComponent("typical.qbak").path, "-q", "--created-at", "2026-01-01T00:00:00Z",
        ])
        guard result.status == 0 else { throw CrashRecording.Failure.recorder("export of v1-typical: \(result.standardError)") }
    }

    public static let all: [PowerLossCommand] = [
        PowerLossCommand(
            name: "export", fixture: nil, target: "backup.qbak", output: .archive,
            prepare: { work in
                try FileManager.default.copyItem(
                    at: Repository.fixtures.appendingPathComponent("v1-wal"), to: work.appendingPathComponent("source"))
            },
            arguments: { work in
                [
                    "export", work.appendingPathComponent("source/default.store").path, "-o",
                    // Uncompressed, the archive takes several of libarchive's 10 KiB writes.
                    work.appendingPathComponent("app/backup.qbak").path, "--force", "--compression", "none", "-q", "--created-at",
                    "2026-01-01T00:00:00Z",
                ]
            }),
        PowerLossCommand(
            name: "import --into", fixture: nil, output: .store(replaces: false), refusalsWhenDone: ["already exists"],
            prepare: exportTypical,
            arguments: { work in
                [
                    "import", work.appendingPathComponent("typical.qbak").path, "--into",
                    work.appendingPathComponent("app/default.store").path, "-q",
                ]
            }),
        PowerLossCommand(
            name: "import --into (new folders)", fixture: nil, target: "new/folders/default.store", output: .store(replaces: false),
            refusalsWhenDone: ["already exists"], prepare: exportTypical,
            arguments: { work in
                [
                    "import", work.appendingPathComponent("typical.qbak").path, "--into",
                    work.appendingPathComponent("app/new/folders/default.store").path, "-q",
                ]
            }),
        PowerLossCommand(
            name: "import --into (external storage)", fixture: nil, output: .store(replaces: false), refusalsWhenDone: ["already exists"],
            prepare: { work in
                let result = try Questbak.run([
                    "export", Repository.fixtures.appendingPathComponent("AnyApp/kitchen-sink/default.store").path, "-o",
                    work.appendingPathComponent("kitchen-sink.qbak").path, "-q", "--created-at", "2026-01-01T00:00:00Z",
                ])
                guard result.status == 0 else { throw CrashRecording.Failure.recorder("export of kitchen-sink: \(result.standardError)") }
            },
            arguments: { work in
                [
                    "import", work.appendingPathComponent("kitchen-sink.qbak").path, "--into",
                    work.appendingPathComponent("app/default.store").path, "-q",
                ]
            }),
        PowerLossCommand(
            name: "import --replace (live WAL)", fixture: "v1-wal", output: .store(replaces: true), prepare: exportTypical,
            arguments: { work in
                [
                    "import", work.appendingPathComponent("typical.qbak").path, "--into",
                    work.appendingPathComponent("app/default.store").path,
                    "--replace", "-q",
                ]
            }),
        PowerLossCommand(
            name: "import --replace (no WAL)", fixture: "v1-edge-cases", output: .store(replaces: true), prepare: exportTypical,
            arguments: { work in
                [
                    "import", work.appendingPathComponent("typical.qbak").path, "--into",
                    work.appendingPathComponent("app/default.store").path,
                    "--replace", "-q",
                ]
            }),
        PowerLossCommand(
            name: "import --merge (live WAL)", fixture: "v1-wal", output: .store(replaces: true), prepare: exportTypical,
            arguments: { work in
                [
                    "import", work.appendingPathComponent("typical.qbak").path, "--merge", "--into",
                    work.appendingPathComponent("app/default.store").path, "-q",
                ]
            }),
        PowerLossCommand(
            name: "migrate --in-place", fixture: "v1-wal", output: .store(replaces: true), refusalsWhenDone: ["is already schema"],
            arguments: { work in
                ["migrate", work.appendingPathComponent("app/default.store").path, "--in-place", "-q", "--now", "2026-01-01T00:00:00Z"]
            }),
    ]
}

/// What the harness found for one command.
public struct PowerLossReport: CustomStringConvertible {
    public var command: String
    /// Operations the recorder logged on the recorded folder (the files found there at the start not counted).
    public var operations = 0
    /// Prefixes of the log whose crash states were all explored, and those sampled.
    public var exhaustivePrefixes = 0
    public var sampledPrefixes = 0
    /// States generated over every prefix, and how many of them were distinct.
    public var states = 0
    public var distinctStates = 0
    /// Second runs of the command on a crash state (one per distinct state of the target and names).
    public var reruns = 0
    public var outcomes: [String: Int] = [:]
    public var failures: [String] = []

    public var description: String {
        "\(command): \(operations) operations, \(exhaustivePrefixes) prefixes exhaustive and \(sampledPrefixes) sampled, \(states) crash states (\(distinctStates) distinct), \(reruns) second runs, "
            + "\(failures.count) failures; \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))"
    }
}

/// Records a command, replays every crash state of its log, and checks each the way the
/// kill-point harness (CrashSafetyTests) checks a kill.
public struct PowerLossHarness {
    public var exhaustiveLimit: Int
    public var samples: Int
    public var seed: UInt64
    /// At most this many second runs (nil: one per distinct state); the cheap checks still see every state.
    public var rerunLimit: Int?

    public init(exhaustiveLimit: Int, samples: Int, seed: UInt64 = 14, rerunLimit: Int? = nil) {
        self.exhaustiveLimit = exhaustiveLimit
        self.samples = samples
        self.seed = seed
        self.rerunLimit = rerunLimit
    }

    /// Records `command` in `work` and checks that the log replays to what the run left: the
    /// recorder's self-check. Fails when something bypassed the shim.
    public func record(_ command: PowerLossCommand, in work: URL) throws -> CrashRecording {
        let folder = work.appendingPathComponent("app")
        try command.prepare(work)
        if let fixture = command.fixture {
            try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent(fixture), to: folder)
        } else {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let (recording, result) = try CrashRecorder.record(
            command.arguments(work), directory: folder, log: work.appendingPathComponent("recording.log"))
        guard result.status == 0 else { throw CrashRecording.Failure.recorder("\(command.name) failed: \(result.standardError)") }
        let replayed = CrashStateExplorer(recording: recording, exhaustiveLimit: 0, samples: 0, seed: 0).finalState
        let actual = try CrashRecording.snapshot(of: folder)
        if let difference = Self.difference(replayed, actual) {
            throw CrashRecording.Failure.recorder("the log does not replay to what \(command.name) left: \(difference)")
        }
        return recording
    }

    /// Where two trees differ, or nil. A `-shm`'s bytes are not compared: SQLite writes them
    /// through mmap, which no shim sees, and rebuilds them from the WAL when it opens a store.
    public static func difference(_ replayed: CrashStateExplorer.Files, _ actual: CrashStateExplorer.Files) -> String? {
        if Set(replayed.keys) != Set(actual.keys) {
            return "names: replayed \(replayed.keys.sorted()), actual \(actual.keys.sorted())"
        }
        for (path, bytes) in actual {
            let other = replayed[path] ?? []
            if path.hasSuffix("-shm") ? other.count != bytes.count : other != bytes {
                return "\(path): replayed \(other.count) bytes, actual \(bytes.count) bytes, different"
            }
        }
        return nil
    }

    /// A fresh work directory (its folder `app` is the recorded one), for `record` and `check`.
    public static func workDirectory() throws -> URL {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("questbak-powerloss-\(UUID().uuidString)")
            .resolvingSymlinksInPath()
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        return work
    }

    /// Every check of one state, a second run included: what the target holds, and the problems.
    public func check(
        _ state: CrashStateExplorer.Files, of command: PowerLossCommand, recording: CrashRecording, in work: URL
    ) throws -> (outcome: String, problems: [String]) {
        let final = CrashStateExplorer(recording: recording, exhaustiveLimit: 0, samples: 0, seed: 0).finalState
        let checker = try StateChecker(command: command, recording: recording, final: final, work: work)
        var problems: [String] = []
        let outcome = checker.check(state, problems: &problems)
        if problems.isEmpty { try checker.rerun(state, outcome: outcome, problems: &problems) }
        return (outcome, problems)
    }

    public func run(_ command: PowerLossCommand) throws -> PowerLossReport {
        let work = try Self.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let recording = try record(command, in: work)
        let explorer = CrashStateExplorer(recording: recording, exhaustiveLimit: exhaustiveLimit, samples: samples, seed: seed)
        let checker = try StateChecker(command: command, recording: recording, final: explorer.finalState, work: work)

        var report = PowerLossReport(command: command.name)
        report.operations = recording.operations.filter { if case .existing = $0 { return false } else { return true } }.count
        for prefix in explorer.prefixes {
            if explorer.isExhaustive(prefix: prefix) { report.exhaustivePrefixes += 1 } else { report.sampledPrefixes += 1 }
        }
        var seen: Set<String> = []
        var rerunKeys: [String] = []
        var rerunKeySet: Set<String> = []
        explorer.forEachState { prefix, state in
            report.states += 1
            let distinct = seen.insert(CrashStateExplorer.key(state)).inserted
            // Once the command has returned, its result is durable: no loss may take it back.
            // (Checked even on a state seen before: an empty folder is fine at the start, not at the end.)
            let finished = prefix == recording.operations.count
            guard distinct || finished else { return }
            var problems: [String] = []
            let outcome = checker.check(state, problems: &problems)
            if finished, !["new", "complete archive"].contains(outcome) {
                problems.append("the command had finished, yet a power loss leaves the target \(outcome)")
            }
            if distinct {
                report.distinctStates += 1
                report.outcomes[outcome, default: 0] += 1
            }
            report.failures += problems.map { "after operation \(prefix) of \(recording.operations.count): \($0)" }
            // A second run depends on the target's bytes and on which names exist (temporary
            // files are removed by name, whatever they hold): one run per such state.
            let key = checker.rerunKey(state)
            if problems.isEmpty, rerunKeySet.insert(key).inserted { rerunKeys.append(key) }
        }
        // Bounded, the second runs are spread evenly over the run rather than spent on its start.
        var chosen = Set(rerunKeys)
        if let rerunLimit, rerunKeys.count > rerunLimit {
            chosen = Set((0..<rerunLimit).map { rerunKeys[$0 * rerunKeys.count / rerunLimit] })
        }
        try explorer.forEachState { prefix, state in
            guard chosen.remove(checker.rerunKey(state)) != nil else { return }
            var problems: [String] = []
            let outcome = checker.check(state, problems: &problems)
            try checker.rerun(state, outcome: outcome, problems: &problems)
            report.reruns += 1
            report.failures += problems.map { "after operation \(prefix) of \(recording.operations.count): \($0)" }
        }
        return report
    }
}

/// The checks of one crash state.
struct StateChecker {
    let command: PowerLossCommand
    let recording: CrashRecording
    let final: CrashStateExplorer.Files
    let work: URL
    let folder: URL
    let targetFiles: [String]
    let oldContent: String?
    let newContent: String?

    init(command: PowerLossCommand, recording: CrashRecording, final: CrashStateExplorer.Files, work: URL) throws {
        self.command = command
        self.recording = recording
        self.final = final
        self.work = work
        folder = work.appendingPathComponent("app")
        targetFiles = ["", "-wal", "-journal"].map { command.target + $0 }
        if case .store = command.output {
            oldContent = recording.initial[command.target] == nil ? nil : try Self.content(recording.initial, targetFiles, in: work).get()
            newContent = try Self.content(final, targetFiles, in: work).get()
        } else {
            oldContent = nil
            newContent = nil
        }
    }

    /// Names a state by what its target holds, adding to `problems` whatever is wrong.
    func check(_ state: CrashStateExplorer.Files, problems: inout [String]) -> String {
        switch command.output {
        case .archive:
            // Never a partial archive under the final name.
            guard let archive = state[command.target] else { return "no archive" }
            if archive == final[command.target] { return "complete archive" }
            problems.append("\(command.target) holds \(archive.count) bytes that are not the complete archive")
            return "broken"
        case .store(let replaces):
            let outcome = classify(state)
            if outcome.hasPrefix("broken") { problems.append("the target is \(outcome)") }
            // A backup under its final name is whole; once the old store is no longer intact byte
            // for byte, its whole backup is there.
            let backups = final.keys.filter { $0.contains(".questbak-backup-") && !$0.contains(".partial-") }
            for name in backups where state[name] != nil && state[name] != final[name] {
                problems.append("the backup \(name) is not complete (\(state[name]?.count ?? 0) bytes)")
            }
            // A new store's records point at its external-storage files: they are all there.
            if outcome == "new" {
                for (name, bytes) in final where name.contains("_SUPPORT/") && !name.hasSuffix("/") && state[name] != bytes {
                    problems.append(
                        "the target is new but its external-storage file \(name) is \(state[name] == nil ? "missing" : "incomplete")")
                }
            }
            if replaces, outcome != "old, byte for byte" {
                for name in backups where !name.hasSuffix("-shm") && state[name] == nil {
                    problems.append("the target is \(outcome) but its backup \(name) is missing")
                }
            }
            return outcome
        }
    }

    func classify(_ state: CrashStateExplorer.Files) -> String {
        let files = targetFiles.map { state[$0] }
        if files.allSatisfy({ $0 == nil }) {
            return recording.initial[command.target] == nil ? "absent" : "broken: the store is gone"
        }
        if files == targetFiles.map({ recording.initial[$0] }) { return "old, byte for byte" }
        if files == targetFiles.map({ final[$0] }) { return "new" }
        switch Self.content(state, targetFiles, in: work) {
        case .success(let content) where content == newContent: return "new"
        case .success(let content) where content == oldContent: return "old content, checkpointed"
        case .success: return "broken: neither the old nor the new data"
        case .failure(let error): return "broken: \(error.reason)"
        }
    }

    /// The target's bytes and every name: all a second run depends on.
    func rerunKey(_ state: CrashStateExplorer.Files) -> String {
        CrashStateExplorer.key(state, only: Set(targetFiles + [command.target])) + state.keys.sorted().joined(separator: "\n")
    }

    /// Puts the state in the recorded folder and runs the command again: it must succeed (or
    /// refuse as it does once done), leave no temporary file and leave the new data.
    func rerun(_ state: CrashStateExplorer.Files, outcome: String, problems: inout [String]) throws {
        try CrashRecording.materialize(state, in: folder)
        let result = try Questbak.run(command.arguments(work))
        let refused = outcome == "new" && command.refusalsWhenDone.contains { result.standardError.contains($0) }
        if result.status != 0 && !refused {
            problems.append("(\(outcome)) a second run failed with \(result.status): \(result.standardError)")
            return
        }
        let targetFolder = folder.appendingPathComponent(command.target).deletingLastPathComponent()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: targetFolder.path).filter {
            $0.contains(".questbak-") && (!$0.contains("questbak-backup") || $0.contains(".partial-"))
        }
        if !leftovers.isEmpty { problems.append("(\(outcome)) temporary files survived a second run: \(leftovers.sorted())") }
        let after = try CrashRecording.snapshot(of: folder)
        switch command.output {
        case .archive:
            if after[command.target] != final[command.target] { problems.append("(\(outcome)) a second run left another archive") }
        case .store:
            let content = Self.content(after, targetFiles, in: work)
            if (try? content.get()) != newContent {
                problems.append("(\(outcome)) after a second run the target is not the new data: \(content)")
            }
        }
    }

    struct Unreadable: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// The store's data as a digest of its schema and of every row (SQLite's own quote() of each
    /// value, sorted), after `PRAGMA integrity_check`: equal data, equal digests. The store is
    /// opened from a scratch copy, as an app would open it, rolling back a hot journal or
    /// reading the WAL; its `-shm` is left out (see `PowerLossHarness.difference`).
    static func content(_ state: CrashStateExplorer.Files, _ files: [String], in work: URL) -> Result<String, Unreadable> {
        let scratch = work.appendingPathComponent("scratch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            for (index, name) in files.enumerated() {
                guard let bytes = state[name] else { continue }
                try Data(bytes).write(to: scratch.appendingPathComponent("s.store" + ["", "-wal", "-journal"][index]))
            }
            guard FileManager.default.fileExists(atPath: scratch.appendingPathComponent("s.store").path) else {
                return .failure(Unreadable(reason: "the main file is missing"))
            }
            let queue = try DatabaseQueue(path: scratch.appendingPathComponent("s.store").path)
            defer { try? queue.close() }
            return try queue.read { db in
                let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard integrity == ["ok"] else { return .failure(Unreadable(reason: "integrity_check: \(integrity.prefix(3))")) }
                var digest = SHA256()
                let tables = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
                for table in tables {
                    let name: String = table["name"]
                    digest.update(data: Data("\(name)\n\(table["sql"] as String? ?? "")\n".utf8))
                    let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [name])
                    guard !columns.isEmpty else { continue }
                    let row = columns.map { "quote(\"\($0)\")" }.joined(separator: " || ',' || ")
                    for line in try String.fetchAll(db, sql: "SELECT \(row) FROM \"\(name)\"").sorted() {
                        digest.update(data: Data((line + "\n").utf8))
                    }
                }
                return .success(digest.finalize().map { String(format: "%02x", $0) }.joined())
            }
        } catch {
            return .failure(Unreadable(reason: "\(error)"))
        }
    }
}
