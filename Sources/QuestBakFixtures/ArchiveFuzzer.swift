import Crypto
import Foundation
import QuestBakKit

/// Mutation fuzzing of `ArchiveReader`: damages a seed archive in many seeded ways, reads every
/// mutant and counts how each ended. Run by `questbak-fuzz` for long campaigns and by
/// ArchiveReaderTests for a quick one. The pass criterion is that every input ends, in time,
/// either accepted or with a typed `ArchiveError` whose message names the archive and prints
/// safely; a crash is a failure too, and leaves its input at `workDirectory/input.qbak`.
///
/// Mutations are applied either to the compressed bytes (what a damaged disk or download gives)
/// or to the tar stream inside, which is then compressed again (what a hostile writer gives:
/// valid compression around a malicious tar). The raw compression the tar-level mutants need comes
/// from `RawCompression` (this target's own use of libarchive, beside the library's TarArchive.swift).
public enum ArchiveFuzzer {
    public struct Report: Sendable, CustomStringConvertible {
        public var inputs = 0
        /// "accepted", or the `ArchiveError` case ("unreadable", "checksumMismatch", …).
        public var outcomes: [String: Int] = [:]
        public var slowestSeconds: Double = 0
        public var slowestMutation = ""
        public var totalSeconds: Double = 0
        /// Inputs that took longer than the time limit, saved in the work directory.
        public var slowInputs: [String] = []
        /// Errors that were not an `ArchiveError`, or whose message was unsafe or unhelpful.
        public var badErrors: [String] = []
        /// The first few mutants that were accepted, to see what damage goes unnoticed.
        public var acceptedSamples: [String] = []
        /// Values mode: imports accepted without repairs whose export differs from the input
        /// (the changed value, a record count, the store UUID).
        public var silentChanges: [String] = []
        /// Values mode: typed errors that still look wrong for bad input (an SQLite error, a
        /// store that did not read back as written); listed, not failed.
        public var questionable: [String] = []
        /// Values mode: seeds the reader refuses, which have no values to change.
        public var skippedSeeds: [String] = []
        /// Values mode: the first input of each outcome, with its error message.
        public var examples: [String: String] = [:]

        public var passed: Bool { slowInputs.isEmpty && badErrors.isEmpty && silentChanges.isEmpty }

        public var description: String {
            var lines = ["inputs: \(inputs) in \(String(format: "%.1f", totalSeconds)) s"]
            for (outcome, count) in outcomes.sorted(by: { $0.value > $1.value }) {
                lines.append("  \(outcome): \(count)")
            }
            lines.append("slowest: \(String(format: "%.3f", slowestSeconds)) s (\(slowestMutation))")
            for input in slowInputs { lines.append("SLOW: \(input)") }
            if !badErrors.isEmpty { lines.append("bad errors: \(badErrors.count), the first 20:") }
            for error in badErrors.prefix(20) { lines.append("BAD: \(error)") }
            if !silentChanges.isEmpty { lines.append("silent changes: \(silentChanges.count), the first 20:") }
            for change in silentChanges.prefix(20) { lines.append("CHANGED: \(change)") }
            if !questionable.isEmpty { lines.append("questionable errors: \(questionable.count), the first 10:") }
            for error in questionable.prefix(10) { lines.append("QUESTIONABLE: \(error)") }
            if !skippedSeeds.isEmpty { lines.append("seeds skipped (refused by the reader): \(skippedSeeds.joined(separator: ", "))") }
            lines.append(passed ? "PASS" : "FAIL")
            return lines.joined(separator: "\n")
        }

        public init() {}

        /// Adds another run's counts to these (the slowest input is the slower of the two).
        public mutating func merge(_ other: Report) {
            inputs += other.inputs
            outcomes.merge(other.outcomes, uniquingKeysWith: +)
            if other.slowestSeconds > slowestSeconds {
                slowestSeconds = other.slowestSeconds
                slowestMutation = other.slowestMutation
            }
            totalSeconds += other.totalSeconds
            slowInputs += other.slowInputs
            badErrors += other.badErrors
            acceptedSamples = Array((acceptedSamples + other.acceptedSamples).prefix(20))
            silentChanges += other.silentChanges
            questionable += other.questionable
            skippedSeeds += other.skippedSeeds
            examples.merge(other.examples) { first, _ in first }
        }
    }

    /// Runs `iterations` mutants of one seed archive. Deterministic for a given seed archive and
    /// `seed`. Each input must finish within `timeLimit` seconds; one still running after
    /// `hangLimit` seconds stops the process (a hang is a crash), leaving it in `input.qbak`.
    public static func run(
        seedArchive: URL, iterations: Int, seed: UInt64, workDirectory: URL, timeLimit: Double = 2, hangLimit: Double = 60
    ) throws -> Report {
        let original = try Data(contentsOf: seedArchive)
        let compression = RawCompression.detectCompression(original)
        let tar = compression == .none ? original : try RawCompression.decompress(original)
        var random = SeededGenerator(seed: seed)
        let input = workDirectory.appendingPathComponent("input.qbak")
        var report = Report()
        let start = Date()
        let watchdog = Watchdog(limit: hangLimit, input: input)
        defer { watchdog.stop() }
        for iteration in 0..<iterations {
            let (mutant, description) = try mutate(original: original, tar: tar, compression: compression, using: &random)
            try mutant.write(to: input)
            let label = "\(seedArchive.lastPathComponent) seed \(seed) #\(iteration): \(description)"
            let inputStart = Date()
            watchdog.started(label)
            defer { watchdog.finished() }
            let outcome: String
            do {
                _ = try ArchiveReader(path: input.path).read()
                outcome = "accepted"
                if report.acceptedSamples.count < 20 { report.acceptedSamples.append(label) }
            } catch let error as ArchiveError {
                outcome = caseName(error)
                if let problem = messageProblem(error, path: input.path) { report.badErrors.append("\(label): \(problem)") }
            } catch {
                outcome = "untyped \(type(of: error))"
                report.badErrors.append("\(label): not an ArchiveError: \(error)")
            }
            let seconds = Date().timeIntervalSince(inputStart)
            report.inputs += 1
            report.outcomes[outcome, default: 0] += 1
            if seconds > report.slowestSeconds {
                report.slowestSeconds = seconds
                report.slowestMutation = label
            }
            if seconds > timeLimit {
                let saved = workDirectory.appendingPathComponent("slow-\(seed)-\(iteration).qbak")
                try? FileManager.default.removeItem(at: saved)
                try? FileManager.default.copyItem(at: input, to: saved)
                report.slowInputs.append("\(label): \(String(format: "%.2f", seconds)) s, saved as \(saved.path)")
            }
        }
        report.totalSeconds = Date().timeIntervalSince(start)
        try? FileManager.default.removeItem(at: input)
        return report
    }

    /// Stops the process when one input runs far too long, saying which.
    private final class Watchdog: @unchecked Sendable {
        private let lock = NSLock()
        private var current: (label: String, start: Date)?
        private var timer: DispatchSourceTimer?

        init(limit: Double, input: URL) {
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + 1, repeating: 1)
            timer.setEventHandler { [unowned self] in
                lock.lock()
                let running = current
                lock.unlock()
                if let running, Date().timeIntervalSince(running.start) > limit {
                    FileHandle.standardError.write(
                        Data("questbak-fuzz: HANG over \(limit) s: \(running.label); input kept at \(input.path)\n".utf8))
                    abort()
                }
            }
            timer.resume()
            self.timer = timer
        }

        func started(_ label: String) {
            lock.lock()
            current = (label, Date())
            lock.unlock()
        }

        func finished() {
            lock.lock()
            current = nil
            lock.unlock()
        }

        func stop() {
            timer?.cancel()
            timer = nil
        }
    }

    /// The enum case of an error, for counting.
    public static func caseName(_ error: ArchiveError) -> String {
        let text = String(describing: error)
        return String(text.prefix { $0 != "(" })
    }

    /// Why an error's message would not do: it must name the archive, print no raw control or
    /// format characters, and never name an empty member.
    static func messageProblem(_ error: ArchiveError, path: String) -> String? {
        let message = error.errorDescription ?? ""
        if !message.hasPrefix(path + ": ") { return "message does not start with the archive path: \(message)" }
        if message.unicodeScalars.contains(where: { [.control, .format].contains($0.properties.generalCategory) }) {
            return "message holds a control character: \(message.debugDescription)"
        }
        if message.contains("member :") || message.contains("member  ") || message.contains(":  ") {
            return "message names an empty member: \(message)"
        }
        if message.utf8.count > 4096 { return "message is \(message.utf8.count) bytes long" }
        return nil
    }

    // MARK: Mutations

    private static func mutate(
        original: Data, tar: Data, compression: ArchiveCompression, using random: inout SeededGenerator
    ) throws -> (Data, String) {
        // Half the mutants damage the compressed bytes, half the tar inside (re-compressed).
        if compression != .none && Bool.random(using: &random) {
            var bytes = [UInt8](original)
            let description = applyRandomMutations(&bytes, using: &random)
            return (Data(bytes), "compressed: " + description)
        }
        var bytes = [UInt8](tar)
        var description: String
        if Int.random(in: 0..<3, using: &random) == 0 {
            description = mutateTarHeader(&bytes, using: &random)
        } else {
            description = applyRandomMutations(&bytes, using: &random)
        }
        // Mostly the seed's own compression; sometimes another, since all three are read.
        var target = compression
        if Int.random(in: 0..<5, using: &random) == 0 {
            target = ArchiveCompression.allCases.filter(\.isAvailable).randomElement(using: &random)!
        }
        description = "tar (\(target.rawValue)): " + description
        return (try RawCompression.compress(Data(bytes), with: target), description)
    }

    private static func applyRandomMutations(_ bytes: inout [UInt8], using random: inout SeededGenerator) -> String {
        var steps: [String] = []
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            steps.append(applyOneMutation(&bytes, using: &random))
        }
        return steps.joined(separator: ", ")
    }

    private static func applyOneMutation(_ bytes: inout [UInt8], using random: inout SeededGenerator) -> String {
        guard !bytes.isEmpty else {
            bytes.append(UInt8.random(in: 0...255, using: &random))
            return "insert into empty"
        }
        let offset = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<8, using: &random) {
        case 0, 1:
            let bit = Int.random(in: 0..<8, using: &random)
            bytes[offset] ^= 1 << bit
            return "flip bit \(bit) at \(offset)"
        case 2:
            let value = [0x00, 0xFF, 0x0A, 0x30, 0x37, 0x7F, 0x80, UInt8.random(in: 0...255, using: &random)].randomElement(using: &random)!
            bytes[offset] = value
            return "set \(offset) to \(value)"
        case 3:
            let count = Int.random(in: 1...16, using: &random)
            bytes.insert(contentsOf: (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }, at: offset)
            return "insert \(count) at \(offset)"
        case 4:
            let count = min(Int.random(in: 1...512, using: &random), bytes.count - offset)
            bytes.removeSubrange(offset..<(offset + count))
            return "delete \(count) at \(offset)"
        case 5:
            bytes.removeSubrange(offset...)
            return "truncate at \(offset)"
        case 6:
            let count = min(Int.random(in: 1...2048, using: &random), bytes.count - offset)
            let chunk = Array(bytes[offset..<(offset + count)])
            let destination = Int.random(in: 0...bytes.count, using: &random)
            bytes.insert(contentsOf: chunk, at: destination)
            return "duplicate \(count) from \(offset) to \(destination)"
        default:
            // Swap two 512-byte blocks: members out of order, headers in data.
            let blocks = bytes.count / 512
            guard blocks >= 2 else {
                bytes[offset] ^= 0xFF
                return "invert \(offset)"
            }
            let first = Int.random(in: 0..<blocks, using: &random) * 512
            let second = Int.random(in: 0..<blocks, using: &random) * 512
            for index in 0..<512 { bytes.swapAt(first + index, second + index) }
            return "swap blocks at \(first) and \(second)"
        }
    }

    /// Rewrites one field of a ustar header with an interesting value and fixes the header's
    /// checksum, so libarchive accepts the header and the reader's own checks are what is tested.
    private static func mutateTarHeader(_ bytes: inout [UInt8], using random: inout SeededGenerator) -> String {
        let headers = headerOffsets(bytes)
        guard let header = headers.randomElement(using: &random) else { return applyOneMutation(&bytes, using: &random) }
        var description: String
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            let names = [
                "../evil", "/etc/passwd", "entities/../../x", "manifest.json", "entities/ROUTINE.jsonl", "MANIFEST.JSON",
                "entities/Routine.jsonl", "store/metadata.plist", "", "entities/\u{1B}[31mred.jsonl", "./manifest.json",
            ]
            let name = names.randomElement(using: &random)!
            writeField(&bytes, at: header, offset: 0, length: 100, value: Array(name.utf8))
            description = "name \(name.debugDescription)"
        case 1:
            let type = Array("0123456xgLKS7A\0".utf8).randomElement(using: &random)!
            bytes[header + 156] = type
            description = "typeflag \(type)"
        case 2:
            let sizes: [Int64] = [0, 1, 511, 512, 1 << 20, 16 << 20 + 1, 1 << 33 - 1, Int64.random(in: 0..<100_000, using: &random)]
            let size = sizes.randomElement(using: &random)!
            writeField(&bytes, at: header, offset: 124, length: 12, value: Array(String(format: "%011llo", size).utf8))
            description = "size \(size)"
        case 3:
            let target = ["manifest.json", "/etc/passwd", "../x"].randomElement(using: &random)!
            writeField(&bytes, at: header, offset: 157, length: 100, value: Array(target.utf8))
            description = "link name \(target)"
        default:
            let mode = ["0000000", "0004755", "0000777", "7777777"].randomElement(using: &random)!
            writeField(&bytes, at: header, offset: 100, length: 8, value: Array(mode.utf8))
            description = "mode \(mode)"
        }
        fixChecksum(&bytes, at: header)
        return "header at \(header): " + description
    }

    /// Offsets of the ustar headers, walking the sizes they declare.
    static func headerOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var offset = 0
        while offset + 512 <= bytes.count, bytes[offset] != 0 {
            offsets.append(offset)
            let field = bytes[(offset + 124)..<(offset + 136)].prefix { $0 != 0 && $0 != 0x20 }
            guard let size = Int(String(decoding: field, as: UTF8.self), radix: 8), size >= 0 else { break }
            offset += 512 + (size + 511) / 512 * 512
        }
        return offsets
    }

    private static func writeField(_ bytes: inout [UInt8], at header: Int, offset: Int, length: Int, value: [UInt8]) {
        for index in 0..<length { bytes[header + offset + index] = index < value.count ? value[index] : 0 }
    }

    private static func fixChecksum(_ bytes: inout [UInt8], at header: Int) {
        for index in 148..<156 { bytes[header + index] = 0x20 }
        let sum = bytes[header..<(header + 512)].reduce(0) { $0 + Int($1) }
        writeField(&bytes, at: header, offset: 148, length: 8, value: Array(String(format: "%06o", sum).utf8) + [0, 0x20])
    }
}

// MARK: - Structure-aware mode: hostile values inside well-formed archives

/// The byte mutants above rarely get past the checksums to the record decoding: nearly every one
/// is refused as damage. This mode takes a corpus archive apart (manifest, entity members, store
/// files), puts hostile values inside well-formed records and metadata, writes the archive again
/// with correct sizes, checksums and counts, and imports it. Every input must end accepted or
/// with a typed error; an import that is accepted without repairs is exported again, and the
/// value that was changed must come back as it went in (else it is a silent change).
extension ArchiveFuzzer {
    public enum Mode: String, CaseIterable, Sendable {
        /// Damage to the bytes: of the compressed stream, or of the tar inside.
        case bytes
        /// Hostile values inside well-formed records and metadata, checksums made right.
        case values
    }

    /// An archive taken apart: the manifest as a JSON object and every other member, in order.
    struct Unpacked {
        var compression: ArchiveCompression
        var manifest: [String: Any]
        var members: [(path: String, data: Data)]

        func member(_ path: String) -> Int? { members.firstIndex { $0.path == path } }
    }

    /// What one value mutant changed, to check after a round trip that it came back unchanged.
    struct Probe {
        var entity: String
        var primaryKey: Int64
        var key: String
        var value: [UInt8]
    }

    /// Runs `iterations` value mutants of one seed archive, which must be one the reader
    /// accepts (others are skipped). Deterministic for a given seed archive and `seed`.
    public static func runValues(
        seedArchive: URL, iterations: Int, seed: UInt64, workDirectory: URL, timeLimit: Double = 2, hangLimit: Double = 60
    ) throws -> Report {
        var report = Report()
        guard (try? ArchiveReader(path: seedArchive.path).read()) != nil, let seedParts = try unpack(seedArchive) else {
            report.skippedSeeds.append(seedArchive.lastPathComponent)
            return report
        }
        var random = SeededGenerator(seed: seed)
        let input = workDirectory.appendingPathComponent("input.qbak")
        let scratch = workDirectory.appendingPathComponent("values-scratch")
        let start = Date()
        let watchdog = Watchdog(limit: hangLimit, input: input)
        defer { watchdog.stop() }
        for iteration in 0..<iterations {
            var parts = seedParts
            let (description, probe, editManifest) = mutateValues(&parts, using: &random)
            try pack(parts, editManifest: editManifest, to: input)
            let label = "\(seedArchive.lastPathComponent) seed \(seed) #\(iteration): \(description)"
            let inputStart = Date()
            watchdog.started(label)
            defer { watchdog.finished() }
            let keep = workDirectory.appendingPathComponent("failed-values-\(seed)-\(iteration).qbak")
            let outcome = judge(input: input, scratch: scratch, probe: probe, label: label, keepAs: keep, report: &report)
            let seconds = Date().timeIntervalSince(inputStart)
            report.inputs += 1
            report.outcomes[outcome, default: 0] += 1
            if outcome.hasSuffix("accepted"), report.acceptedSamples.count < 20 { report.acceptedSamples.append(label) }
            if seconds > report.slowestSeconds {
                report.slowestSeconds = seconds
                report.slowestMutation = label
            }
            if seconds > timeLimit {
                let saved = workDirectory.appendingPathComponent("slow-values-\(seed)-\(iteration).qbak")
                try? FileManager.default.removeItem(at: saved)
                try? FileManager.default.copyItem(at: input, to: saved)
                report.slowInputs.append("\(label): \(String(format: "%.2f", seconds)) s, saved as \(saved.path)")
            }
        }
        report.totalSeconds = Date().timeIntervalSince(start)
        try? FileManager.default.removeItem(at: input)
        try? FileManager.default.removeItem(at: scratch)
        return report
    }

    // MARK: The oracle

    /// Reads, imports and (when accepted without repairs) exports one input; returns the outcome
    /// to count and records every problem in `report`. A failing input is kept as `keepAs`.
    private static func judge(input: URL, scratch: URL, probe: Probe?, label: String, keepAs: URL, report: inout Report) -> String {
        let fileManager = FileManager.default
        try? fileManager.removeItem(at: scratch)
        try? fileManager.createDirectory(at: scratch.appendingPathComponent("import"), withIntermediateDirectories: true)
        try? fileManager.createDirectory(at: scratch.appendingPathComponent("repair"), withIntermediateDirectories: true)
        var failed = false
        defer {
            if failed {
                try? fileManager.removeItem(at: keepAs)
                try? fileManager.copyItem(at: input, to: keepAs)
            }
        }
        // 1. The verifying reader, as the byte mode runs it: checksums were made right, so
        //    only header and count lies are refused here.
        do {
            _ = try ArchiveReader(path: input.path).read()
        } catch {
            let (name, problem) = classify(error, stage: "read", archive: input.path)
            if report.examples[name] == nil { report.examples[name] = "\(label)\n    → \(error.localizedDescription.prefix(300))" }
            if let problem {
                report.badErrors.append("\(label): \(problem)")
                failed = true
            }
            return name
        }
        // 2. Import without --validate: values are decoded and written, repairs refused.
        let target = scratch.appendingPathComponent("restored.store")
        var options = Importer.Options()
        options.now = 0
        options.profiles = [.timeQuest]
        do {
            _ = try Importer.run(
                archive: input.path, into: target, options: options, workDirectory: scratch.appendingPathComponent("import"))
        } catch {
            let (name, problem) = classify(error, stage: "import", archive: input.path)
            if report.examples[name] == nil { report.examples[name] = "\(label)\n    → \(error.localizedDescription.prefix(300))" }
            if let problem {
                report.badErrors.append("\(label): \(problem)")
                failed = true
            }
            if case .repairsNeeded? = error as? ImportError {
                // 3. The same archive with --validate: the repairs run on the hostile values.
                options.validate = true
                let repaired = scratch.appendingPathComponent("repaired.store")
                do {
                    _ = try Importer.run(
                        archive: input.path, into: repaired, options: options, workDirectory: scratch.appendingPathComponent("repair"))
                    return "\(name), repaired: accepted"
                } catch {
                    let (repairName, repairProblem) = classify(error, stage: "import --validate", archive: input.path)
                    let key = "\(name), repaired: \(repairName)"
                    if report.examples[key] == nil { report.examples[key] = "\(label)\n    → \(error.localizedDescription.prefix(300))" }
                    if let repairProblem {
                        report.badErrors.append("\(label): \(repairProblem)")
                        failed = true
                    }
                    return "\(name), repaired: \(repairName)"
                }
            }
            if name.contains("sqlite") || name.contains("verificationFailed") {
                report.questionable.append("\(label): \(String(describing: error).prefix(400))")
            }
            return name
        }
        // 4. Accepted without repairs: export the new store, and compare.
        let exported = scratch.appendingPathComponent("exported.qbak")
        do {
            _ = try Exporter.export(
                storeAt: target, to: .file(exported, overwrite: true), options: ArchiveFuzzer.exportOptions)
        } catch {
            report.badErrors.append(
                "\(label): the store an accepted import wrote does not export: \(String(describing: error).prefix(400))")
            failed = true
            return "import accepted, export failed"
        }
        var notes: [String] = []
        let changes = roundTripChanges(input: input, exported: exported, probe: probe, notes: &notes)
        for note in notes { report.questionable.append("\(label): \(note)") }
        if !changes.isEmpty {
            report.silentChanges.append("\(label): " + changes.joined(separator: "; "))
            failed = true
            return "import accepted, changed"
        }
        return "import accepted"
    }

    /// The outcome name of an error, and what is wrong with it when it is not a typed questbak
    /// error with a safe message.
    private static func classify(_ error: Error, stage: String, archive: String) -> (String, String?) {
        let caseText = { (error: Error) in String(String(describing: error).prefix { $0 != "(" }) }
        switch error {
        case let error as ArchiveError:
            return ("\(stage) \(caseName(error))", messageProblem(error, path: archive).map { "\(stage): \($0)" })
        case is ImportError, is StoreError, is RepairError, is OutputError:
            let message = (error as? LocalizedError)?.errorDescription ?? ""
            var problem: String?
            if message.isEmpty { problem = "\(stage): \(type(of: error)) without a message" }
            if message.unicodeScalars.contains(where: { [.control, .format].contains($0.properties.generalCategory) && $0 != "\n" }) {
                problem = "\(stage): message holds a control character: \(message.debugDescription.prefix(400))"
            }
            if message.utf8.count > 4096 { problem = "\(stage): message is \(message.utf8.count) bytes long" }
            return ("\(stage) \(type(of: error)).\(caseText(error))", problem)
        default:
            return (
                "\(stage) untyped \(type(of: error))",
                "\(stage): not a typed questbak error: \(type(of: error)): \(String(describing: error).prefix(400))"
            )
        }
    }

    /// What an accepted import changed: record counts per entity, the store UUID, and the
    /// mutated value, which must come back equal (same text, number or instant).
    static func roundTripChanges(input: URL, exported: URL, probe: Probe?, notes: inout [String]) -> [String] {
        guard let before = try? unpack(input), let after = try? unpack(exported) else { return ["the export cannot be read back"] }
        var changes: [String] = []
        let uuid = { (parts: Unpacked) in (parts.manifest["source"] as? [String: Any])?["storeUUID"] as? String }
        if uuid(before) != uuid(after) {
            changes.append(
                "storeUUID \(uuid(before)?.debugDescription.prefix(80) ?? "nil") came back as \(uuid(after)?.debugDescription.prefix(80) ?? "nil")"
            )
        }
        let counts = { (parts: Unpacked) -> [String: Int] in
            var counts: [String: Int] = [:]
            for entity in parts.manifest["entities"] as? [[String: Any]] ?? [] {
                if let name = entity["name"] as? String { counts[name] = (entity["count"] as? NSNumber)?.intValue }
            }
            return counts
        }
        if counts(before) != counts(after) {
            changes.append(
                "record counts \(counts(before).sorted { $0.key < $1.key }) came back as \(counts(after).sorted { $0.key < $1.key })")
        }
        // The new store's metadata plist must name the store by the UUID its Z_METADATA row has.
        if let plist = after.member(ArchiveManifest.metadataPath).flatMap({ try? BinaryPropertyList.decode(after.members[$0].data) }),
            case .string(let plistUUID)? = plist["NSStoreUUID"], plistUUID != uuid(after)
        {
            notes.append(
                "the restored store's metadata plist has NSStoreUUID \(plistUUID.debugDescription.prefix(80)), its Z_UUID is \(uuid(after)?.debugDescription.prefix(80) ?? "nil")"
            )
        }
        guard let probe else { return changes }
        guard let index = after.member(ArchiveManifest.entityPath(probe.entity)) else {
            return changes + ["entity \(probe.entity) is missing from the export"]
        }
        let lines = splitLines(after.members[index].data).dropFirst()
        let found = lines.lazy.compactMap { FuzzJSON.members($0) }.first { members in
            members.contains {
                FuzzJSON.decodeKey($0.key) == RecordJSON.primaryKeyKey && FuzzJSON.decode($0.value) == .integer(probe.primaryKey)
            }
        }
        guard let record = found else { return changes + ["\(probe.entity) _pk \(probe.primaryKey) is missing from the export"] }
        guard let written = record.first(where: { FuzzJSON.decodeKey($0.key) == probe.key })?.value else {
            return changes + ["\(probe.entity) _pk \(probe.primaryKey): \(probe.key) is missing from the export"]
        }
        guard let original = FuzzJSON.decode(probe.value), let restored = FuzzJSON.decode(written) else { return changes }
        if FuzzJSON.sameValue(original, restored) {
            return changes
        } else if FuzzJSON.differOnlyInZeroSign(original, restored) {
            notes.append(
                "\(probe.entity) _pk \(probe.primaryKey) \(probe.key): \(show(probe.value)) (negative zero) came back as \(show(written)) (SQLite stores -0.0 in a REAL column as 0)"
            )
        } else {
            changes.append("\(probe.entity) _pk \(probe.primaryKey) \(probe.key): \(show(probe.value)) came back as \(show(written))")
        }
        return changes
    }

    static func show(_ raw: [UInt8], limit: Int = 120) -> String {
        let text = String(decoding: raw.prefix(limit), as: UTF8.self).debugDescription
        return raw.count > limit ? "\(text)… (\(raw.count) bytes)" : text
    }

    // MARK: Taking archives apart and putting them together

    static func unpack(_ url: URL) throws -> Unpacked? {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw StoreError.unreadable(path: url.path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var magic = [UInt8](repeating: 0, count: 4)
        let magicCount = magic.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 4) }
        lseek(descriptor, 0, SEEK_SET)
        var manifest: [String: Any]?
        var members: [(path: String, data: Data)] = []
        do {
            let tar = try TarArchiveReader(fileDescriptor: descriptor)
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while let entry = try tar.nextEntry() {
                var data = Data()
                while true {
                    let count = try buffer.withUnsafeMutableBytes { try tar.read(into: $0) }
                    if count == 0 { break }
                    data.append(contentsOf: buffer[0..<count])
                }
                if entry.path == ArchiveManifest.path, manifest == nil {
                    manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
                } else {
                    members.append((entry.path, data))
                }
            }
        } catch is TarReadError {
            return nil
        }
        guard let manifest else { return nil }
        let compression = RawCompression.detectCompression(Data(magic.prefix(max(0, magicCount))))
        return Unpacked(compression: compression, manifest: manifest, members: members)
    }

    /// Writes `parts` as an archive whose manifest lists every member's true size, SHA-256 and
    /// (for entities) record count; `editManifest` then gets the last word, to make it lie.
    static func pack(_ parts: Unpacked, editManifest: (inout [String: Any]) -> Void, to url: URL) throws {
        var manifest = parts.manifest
        var entities = manifest["entities"] as? [[String: Any]] ?? []
        var files = manifest["files"] as? [[String: Any]] ?? []
        for (path, data) in parts.members {
            let digest = SHA256.hash(data: data).hexString
            if let index = entities.firstIndex(where: { $0["path"] as? String == path }) {
                entities[index]["bytes"] = data.count
                entities[index]["sha256"] = digest
                entities[index]["count"] = max(0, splitLines(data).count - 1)
            } else if let index = files.firstIndex(where: { $0["path"] as? String == path }) {
                files[index]["bytes"] = data.count
                files[index]["sha256"] = digest
            } else if path.hasPrefix("store/") {
                files.append(["path": path, "bytes": data.count, "sha256": digest])
            }
        }
        manifest["entities"] = entities
        manifest["files"] = files
        editManifest(&manifest)
        let manifestData = try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys])
        try? FileManager.default.removeItem(at: url)
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw StoreError.io(path: url.path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        let writer = try TarArchiveWriter(fileDescriptor: descriptor, compression: parts.compression, modificationTime: 1_700_000_000)
        try writer.addFile(path: ArchiveManifest.path, data: manifestData)
        for (path, data) in parts.members { try writer.addFile(path: path, data: data) }
        try writer.finish()
    }

    /// A member's lines without their newlines; a final newline ends the last line.
    static func splitLines(_ data: Data) -> [[UInt8]] {
        var lines = [UInt8](data).split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    static func joinLines(_ lines: [[UInt8]]) -> Data {
        var data = Data()
        for line in lines {
            data.append(contentsOf: line)
            data.append(0x0A)
        }
        return data
    }

    static func object(_ members: [(key: [UInt8], value: [UInt8])]) -> [UInt8] {
        var line: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in members.enumerated() {
            if index > 0 { line.append(UInt8(ascii: ",")) }
            line += member.key + [UInt8(ascii: ":")] + member.value
        }
        return line + [UInt8(ascii: "}")]
    }

    static func quoted(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        ValueJSON.appendString(text, to: &output)
        return output
    }

    // MARK: Value mutations

    /// Applies one to three mutations; returns their description, the value to check after a
    /// round trip (single value replacements only), and a last edit of the manifest.
    private static func mutateValues(
        _ parts: inout Unpacked, using random: inout SeededGenerator
    ) -> (String, Probe?, (inout [String: Any]) -> Void) {
        var steps: [String] = []
        var probe: Probe?
        var manifestEdits: [(inout [String: Any]) -> Void] = []
        let count = [1, 1, 1, 1, 2, 3].randomElement(using: &random)!
        for _ in 0..<count {
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 55 {
                let (step, newProbe) = mutateRecordValue(&parts, using: &random)
                steps.append(step)
                // Only a single replacement is checked: a second mutation may remove or refuse it.
                probe = count == 1 ? newProbe : nil
            } else if roll < 72 {
                steps.append(mutateRecordStructure(&parts, using: &random))
            } else if roll < 77 {
                steps.append(mutateHeader(&parts, using: &random))
            } else if roll < 87 {
                let (step, edit) = mutateManifest(&parts, using: &random)
                steps.append(step)
                manifestEdits.append(edit)
            } else {
                steps.append(mutateMetadata(&parts, using: &random))
            }
        }
        // Compressions vary, as in the byte mode: all three are read.
        if Int.random(in: 0..<5, using: &random) == 0 {
            parts.compression = ArchiveCompression.allCases.filter(\.isAvailable).randomElement(using: &random)!
        }
        return (
            "values (\(parts.compression.rawValue)): " + steps.joined(separator: ", "), probe,
            { manifest in
                for edit in manifestEdits { edit(&manifest) }
            }
        )
    }

    /// The schema of the archive's records, to pick hostile values of the right kind.
    private static func schema(of parts: Unpacked) -> Schema? {
        TimeQuestSchemas.declaration(parts.manifest["schemaVersion"] as? String ?? "1.0.0")
    }

    /// A random record line: (member index, line index), never the header.
    private static func randomRecord(_ parts: Unpacked, using random: inout SeededGenerator) -> (Int, Int, [[UInt8]])? {
        let candidates = parts.members.indices.filter {
            parts.members[$0].path.hasPrefix("entities/") && splitLines(parts.members[$0].data).count > 1
        }
        guard let member = candidates.randomElement(using: &random) else { return nil }
        let lines = splitLines(parts.members[member].data)
        return (member, Int.random(in: 1..<lines.count, using: &random), lines)
    }

    private static func entityName(_ path: String) -> String {
        String(path.dropFirst("entities/".count).dropLast(".jsonl".count))
    }

    /// Replaces one property's value with a hostile one chosen for its kind.
    private static func mutateRecordValue(_ parts: inout Unpacked, using random: inout SeededGenerator) -> (String, Probe?) {
        guard let (member, lineIndex, lines) = randomRecord(parts, using: &random), var members = FuzzJSON.members(lines[lineIndex]),
            !members.isEmpty
        else {
            return ("no record to change", nil)
        }
        let entity = entityName(parts.members[member].path)
        let which = Int.random(in: 0..<members.count, using: &random)
        let key = FuzzJSON.decodeKey(members[which].key) ?? ""
        let kind = schema(of: parts)?.entity(named: entity)?.attribute(named: key)?.kind.rawValue
        let isRelationship = schema(of: parts)?.entity(named: entity)?.relationship(named: key) != nil
        var pool: [[UInt8]]
        if Int.random(in: 0..<8, using: &random) == 0 {
            pool = HostileValues.wrongTypes
        } else if key == RecordJSON.primaryKeyKey {
            pool = HostileValues.primaryKeys + primaryKeysOfOthers(parts, member: member)
        } else if isRelationship {
            pool = HostileValues.toOneKeys
        } else {
            switch kind {
            case "integer": pool = HostileValues.integers
            case "double": pool = HostileValues.doubles
            case "date": pool = HostileValues.dates
            case "string", "uuid", "binary": pool = HostileValues.strings
            case "integerArray", "stringArray": pool = HostileValues.arrays
            case "boolean": pool = HostileValues.booleans
            default: pool = HostileValues.integers + HostileValues.strings + HostileValues.wrongTypes
            }
        }
        let value = pool.randomElement(using: &random)!
        members[which].value = value
        var updated = lines
        updated[lineIndex] = object(members)
        parts.members[member].data = joinLines(updated)
        let description = "\(entity) line \(lineIndex + 1) \(key) = \(show(value, limit: 80))"
        guard key != RecordJSON.primaryKeyKey,
            let primaryKey = members.first(where: { FuzzJSON.decodeKey($0.key) == RecordJSON.primaryKeyKey }).flatMap({
                FuzzJSON.decode($0.value)
            }),
            case .integer(let number) = primaryKey
        else { return (description, nil) }
        return (description, Probe(entity: entity, primaryKey: number, key: key, value: value))
    }

    /// Primary keys of other records (of this entity and others), to make duplicates and
    /// references that point somewhere.
    private static func primaryKeysOfOthers(_ parts: Unpacked, member: Int) -> [[UInt8]] {
        splitLines(parts.members[member].data).dropFirst().prefix(3).compactMap { line in
            FuzzJSON.members(line)?.first { FuzzJSON.decodeKey($0.key) == RecordJSON.primaryKeyKey }?.value
        }
    }

    /// Keys removed, added, doubled or respelled; lines removed, doubled, padded or replaced.
    private static func mutateRecordStructure(_ parts: inout Unpacked, using random: inout SeededGenerator) -> String {
        guard let (member, lineIndex, lines) = randomRecord(parts, using: &random) else { return "no record to change" }
        let entity = entityName(parts.members[member].path)
        var updated = lines
        var members = FuzzJSON.members(lines[lineIndex]) ?? []
        var description: String
        switch Int.random(in: 0..<14, using: &random) {
        case 0 where !members.isEmpty:
            let removed = members.remove(at: Int.random(in: 0..<members.count, using: &random))
            updated[lineIndex] = object(members)
            description = "remove key \(show(removed.key))"
        case 1:
            let extra = HostileValues.extraKeys.randomElement(using: &random)!
            members.insert(
                (extra, HostileValues.integers.randomElement(using: &random)!), at: Int.random(in: 0...members.count, using: &random))
            updated[lineIndex] = object(members)
            description = "add key \(show(extra))"
        case 2 where !members.isEmpty:
            // The same key twice, the second time with another value.
            let which = members[Int.random(in: 0..<members.count, using: &random)]
            let value = (HostileValues.integers + HostileValues.strings).randomElement(using: &random)!
            members.insert((which.key, value), at: Int.random(in: 0...members.count, using: &random))
            updated[lineIndex] = object(members)
            description = "duplicate key \(show(which.key)) = \(show(value, limit: 40))"
        case 3 where !members.isEmpty:
            // A key spelled with escapes, or in another case or normalization: one key twice?
            let which = members[Int.random(in: 0..<members.count, using: &random)]
            let name = FuzzJSON.decodeKey(which.key) ?? ""
            let spellings: [[UInt8]] = [
                Array("\"".utf8) + name.unicodeScalars.flatMap { Array(String(format: "\\u%04x", $0.value).utf8) } + Array("\"".utf8),
                quoted(name.uppercased()), quoted(name.capitalized), quoted(name + " "), quoted(" " + name), quoted(name + "\u{0}"),
                quoted(name + "\u{301}"), quoted(name.replacingOccurrences(of: "e", with: "e\u{301}")),
            ]
            let spelling = spellings.randomElement(using: &random)!
            members.append((spelling, which.value))
            updated[lineIndex] = object(members)
            description = "key \(show(which.key)) again as \(show(spelling))"
        case 4:
            members.reverse()
            updated[lineIndex] = object(members)
            description = "keys in reverse order"
        case 5:
            updated.remove(at: lineIndex)
            updated[0] = withHeaderCount(updated[0], updated.count - 1)
            description = "remove line \(lineIndex + 1)"
        case 6:
            updated.insert(lines[lineIndex], at: Int.random(in: 1...updated.count, using: &random))
            updated[0] = withHeaderCount(updated[0], updated.count - 1)
            description = "duplicate line \(lineIndex + 1)"
        case 7:
            let padded: [([UInt8], String)] = [
                ([0x20] + lines[lineIndex] + [0x20], "spaces around"), ([0x09] + lines[lineIndex], "a tab before"),
                (lines[lineIndex] + [0x0D], "CR before LF"), ([0xEF, 0xBB, 0xBF] + lines[lineIndex], "a BOM before"),
                (lines[lineIndex] + Array("x".utf8), "trailing x"), (lines[lineIndex] + lines[lineIndex], "twice on one line"),
                (lines[lineIndex] + Array(",".utf8), "trailing comma"), (Array(lines[lineIndex].dropLast()), "no closing brace"),
                ([UInt8(ascii: "{"), 0x0C] + lines[lineIndex].dropFirst(), "a form feed (not JSON whitespace) after the brace"),
            ]
            let (line, what) = padded.randomElement(using: &random)!
            updated[lineIndex] = line
            description = "line \(lineIndex + 1) with \(what)"
        case 8:
            let replacement = HostileValues.wholeLines.randomElement(using: &random)!
            updated[lineIndex] = replacement
            description = "line \(lineIndex + 1) replaced by \(show(replacement, limit: 60))"
        case 9:
            // A record of another entity in this member.
            let others = parts.members.indices.filter {
                $0 != member && parts.members[$0].path.hasPrefix("entities/") && splitLines(parts.members[$0].data).count > 1
            }
            guard let other = others.randomElement(using: &random) else { return "no other entity" }
            let otherLines = splitLines(parts.members[other].data)
            updated[lineIndex] = otherLines[Int.random(in: 1..<otherLines.count, using: &random)]
            description = "line \(lineIndex + 1) from \(entityName(parts.members[other].path))"
        case 10:
            // Nested arrays just under and over the parser's depth limit.
            let depth = [62, 63, 64, 65, 1000, 100_000].randomElement(using: &random)!
            let key = members.isEmpty ? quoted("x") : members[Int.random(in: 0..<members.count, using: &random)].key
            let nested = [UInt8](repeating: UInt8(ascii: "["), count: depth) + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = nested
            } else {
                members.append((key, nested))
            }
            updated[lineIndex] = object(members)
            description = "\(show(key)) = arrays nested \(depth) deep"
        case 11:
            // Two records swap places; primary keys out of order.
            let other = Int.random(in: 1..<updated.count, using: &random)
            updated.swapAt(lineIndex, other)
            description = "swap lines \(lineIndex + 1) and \(other + 1)"
        case 12 where Int.random(in: 0..<50, using: &random) == 0:
            // A value just over the 16 MiB line limit (rarely: it is slow).
            let key = members.first { FuzzJSON.decodeKey($0.key) != RecordJSON.primaryKeyKey }?.key ?? quoted("x")
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "x"), count: 16 << 20) + [UInt8(ascii: "\"")]
            }
            updated[lineIndex] = object(members)
            description = "\(show(key)) = a 16 MiB string"
        default:
            // Every key of the line dropped but _pk.
            members = members.filter { FuzzJSON.decodeKey($0.key) == RecordJSON.primaryKeyKey }
            updated[lineIndex] = object(members)
            description = "only _pk kept"
        }
        parts.members[member].data = joinLines(updated)
        return "\(entity) " + description
    }

    private static func withHeaderCount(_ header: [UInt8], _ count: Int) -> [UInt8] {
        guard var members = FuzzJSON.members(header), let index = members.firstIndex(where: { FuzzJSON.decodeKey($0.key) == "count" })
        else { return header }
        members[index].value = Array(String(count).utf8)
        return object(members)
    }

    /// Header lines that lie or are odd: count, entity, schemaVersion, extra and doubled keys.
    private static func mutateHeader(_ parts: inout Unpacked, using random: inout SeededGenerator) -> String {
        let candidates = parts.members.indices.filter { parts.members[$0].path.hasPrefix("entities/") }
        guard let member = candidates.randomElement(using: &random) else { return "no entity member" }
        var lines = splitLines(parts.members[member].data)
        guard !lines.isEmpty, var members = FuzzJSON.members(lines[0]) else { return "no header" }
        let entity = entityName(parts.members[member].path)
        let edits: [(String, [UInt8])] = [
            ("count", Array("\(lines.count)".utf8)), ("count", Array("\(lines.count - 2)".utf8)), ("count", Array("-1".utf8)),
            ("count", Array("9223372036854775807".utf8)), ("count", Array("1.0".utf8)), ("count", Array("\"1\"".utf8)),
            ("count", Array("null".utf8)),
            ("entity", quoted(entity.uppercased())), ("entity", quoted(entity + "\u{0}")), ("entity", quoted("")),
            ("entity", Array("null".utf8)),
            ("schemaVersion", quoted("9.0.0")), ("schemaVersion", quoted("1.0.0")), ("schemaVersion", quoted("2.0.0")),
            ("schemaVersion", Array("2".utf8)),
            ("extra", Array("1".utf8)),
        ]
        let (key, value) = edits.randomElement(using: &random)!
        if let index = members.firstIndex(where: { FuzzJSON.decodeKey($0.key) == key }), Bool.random(using: &random) {
            members[index].value = value
        } else {
            members.append((quoted(key), value))
        }
        lines[0] = object(members)
        parts.members[member].data = joinLines(lines)
        return "\(entity) header \(key) = \(show(value, limit: 40))"
    }

    /// Manifest values that are odd but well-formed JSON; the sizes and checksums stay right.
    private static func mutateManifest(
        _ parts: inout Unpacked, using random: inout SeededGenerator
    ) -> (String, (inout [String: Any]) -> Void) {
        let entityIndex = Int.random(in: 0..<8, using: &random)
        let choice = Int.random(in: 0..<11, using: &random)
        switch choice {
        case 0:
            let text = HostileValues.dateTexts.randomElement(using: &random)!
            return ("manifest createdAt = \(text.debugDescription)", { $0["createdAt"] = text })
        case 1:
            let values: [Int64] = [Int64.min, -1, 0, 1, Int64.max, (1 << 53) + 1, Int64(Int32.max) + 1]
            let value: Int64 = values.randomElement(using: &random)!
            return (
                "manifest entities[\(entityIndex)].maximumPrimaryKey = \(value)",
                { manifest in
                    guard var entities = manifest["entities"] as? [[String: Any]], !entities.isEmpty else { return }
                    entities[entityIndex % entities.count]["maximumPrimaryKey"] = NSNumber(value: value)
                    manifest["entities"] = entities
                }
            )
        case 2:
            let values: [Any] = [
                NSNumber(value: Int64.min), NSNumber(value: -1), NSNumber(value: 0), NSNumber(value: Int64.max), NSNull(), "1526",
            ]
            let value = values.randomElement(using: &random)!
            return (
                "manifest source.frameworkVersion = \(value)",
                { manifest in
                    var source = manifest["source"] as? [String: Any] ?? [:]
                    source["frameworkVersion"] = value
                    manifest["source"] = source
                }
            )
        case 3:
            let value = [
                "", "not-a-uuid", "00000000-0000-0000-0000-000000000000", String(repeating: "A", count: 100_000), "\u{0}", "../../etc",
                "3c0a9e61-0d4e-4c5b-9b53-6e1f0f1a0002", "\u{202E}evil", "e\u{301}",
            ].randomElement(using: &random)!
            return (
                "manifest source.storeUUID = \(show(Array(value.utf8), limit: 40))",
                { manifest in
                    var source = manifest["source"] as? [String: Any] ?? [:]
                    source["storeUUID"] = value
                    manifest["source"] = source
                }
            )
        case 4:
            let value = [
                "1.0.0", "2.0.0", "3.0.0", "1.0", "01.0.0", "1.0.0.0", "2.0.0-beta", "", " 1.0.0", "18446744073709551616.0.0", "1.0.0\u{0}",
            ].randomElement(using: &random)!
            return (
                "manifest schemaVersion = \(value.debugDescription)",
                { manifest in
                    manifest["schemaVersion"] = value
                }
            )
        case 5:
            let value = [Int.min, -1, 0, Int.max].randomElement(using: &random)!
            return (
                "manifest source.walFrames = \(value)",
                { manifest in
                    var source = manifest["source"] as? [String: Any] ?? [:]
                    source["walFrames"] = value
                    manifest["source"] = source
                }
            )
        case 6:
            let value = [Int.min, -1, Int.max].randomElement(using: &random)!
            return (
                "manifest bookkeepingRows.ACHANGE = \(value)",
                { manifest in
                    var rows = manifest["bookkeepingRows"] as? [String: Any] ?? [:]
                    rows["ACHANGE"] = value
                    manifest["bookkeepingRows"] = rows
                }
            )
        case 7:
            let values: [[Any]] = [[], ["9.9.9"], [""], [1], ["1.0.0", "2.0.0"]]
            let value = values.randomElement(using: &random)!
            return (
                "manifest source.versionIdentifiers = \(value)",
                { manifest in
                    var source = manifest["source"] as? [String: Any] ?? [:]
                    source["versionIdentifiers"] = value
                    manifest["source"] = source
                }
            )
        case 8:
            let value = ["generic", "TimeQuest", "", "timequest\u{0}"].randomElement(using: &random)!
            return (
                "manifest source.schema = \(value.debugDescription)",
                { manifest in
                    var source = manifest["source"] as? [String: Any] ?? [:]
                    source["schema"] = value
                    manifest["source"] = source
                }
            )
        case 9:
            // A model cache member: copied into the new store as it is.
            let bytes = Data((0..<Int.random(in: 0..<4096, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            parts.members.append(("store/modelcache.bin", bytes))
            return ("add store/modelcache.bin of \(bytes.count) bytes", { _ in })
        default:
            let value = [2, 0, -1, Int.max].randomElement(using: &random)!
            return ("manifest formatVersion = \(value)", { $0["formatVersion"] = value })
        }
    }

    /// metadata.plist: its values (decoded, changed, encoded again) or its structure (trailer
    /// fields, widths, offsets, markers), or a hostile plist in its place.
    private static func mutateMetadata(_ parts: inout Unpacked, using random: inout SeededGenerator) -> String {
        let path = ArchiveManifest.metadataPath
        guard let index = parts.member(path) else {
            parts.members.append((path, BinaryPropertyList.encode(.dictionary([:]))))
            return "add an empty metadata.plist"
        }
        var bytes = [UInt8](parts.members[index].data)
        var description: String
        // A plist too short for a trailer (an earlier mutation made it so) is only replaced.
        let choice = bytes.count >= 40 ? Int.random(in: 0..<7, using: &random) : 6
        switch choice {
        case 0, 1:
            guard case .dictionary(var entries)? = try? BinaryPropertyList.decode(Data(bytes)) else {
                return "metadata.plist does not decode"
            }
            let keys = [
                "NSStoreUUID", "NSStoreModelVersionHashes", "NSStoreModelVersionIdentifiers", "NSPersistenceFrameworkVersion",
                "NSStoreType", "NSStoreModelVersionHashesVersion", "_NSAutoVacuumLevel", "extra", "e\u{301}", "\u{E9}",
            ]
            let key = keys.randomElement(using: &random)!
            let value = HostileValues.plistValues.randomElement(using: &random)!
            if Int.random(in: 0..<6, using: &random) == 0 {
                entries[key] = nil
                description = "metadata.plist without \(key)"
            } else if key == "NSStoreModelVersionHashes", case .dictionary(var hashes)? = entries[key],
                let entity = hashes.keys.sorted().randomElement(using: &random)
            {
                hashes[entity] = value
                entries[key] = .dictionary(hashes)
                description = "metadata.plist hash of \(entity) = \(String(describing: value).prefix(60))"
            } else {
                entries[key] = value
                description = "metadata.plist \(key.debugDescription) = \(String(describing: value).prefix(60))"
            }
            bytes = [UInt8](BinaryPropertyList.encode(.dictionary(entries)))
        case 2:
            // One 8-byte trailer field at a limit.
            let field = [8, 16, 24].randomElement(using: &random)!
            let value = HostileValues.limits.randomElement(using: &random)!
            write(value, width: 8, into: &bytes, at: bytes.count - 32 + field)
            description = "metadata.plist trailer \(["objectCount", "topObject", "offsetTable"][field / 8 - 1]) = \(value)"
        case 3:
            let which = Int.random(in: 6...7, using: &random)
            let value = [0, 1, 2, 3, 4, 8, 16, 255].randomElement(using: &random)!
            bytes[bytes.count - 32 + which] = UInt8(value)
            description = "metadata.plist trailer \(which == 6 ? "offsetWidth" : "referenceWidth") = \(value)"
        case 4:
            // One offset-table entry at a limit (or pointing into the table or the trailer).
            let width = Int(bytes[bytes.count - 26])
            let table = Int(truncatingIfNeeded: bytes[(bytes.count - 8)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            // Earlier mutations may have shortened the plist or moved the table anywhere.
            guard bytes.count >= 40, table >= 8, table <= bytes.count - 32 else { return "metadata.plist has no offset table" }
            let entries = (bytes.count - 32 - table) / max(width, 1)
            guard width > 0, entries > 0 else { return "metadata.plist has no offset table" }
            let entry = Int.random(in: 0..<entries, using: &random)
            let value = (HostileValues.limits + [UInt64(table), UInt64(bytes.count - 32), UInt64(bytes.count)]).randomElement(
                using: &random)!
            write(value, width: width, into: &bytes, at: table + entry * width)
            description = "metadata.plist offset \(entry) = \(value) (\(width) bytes)"
        case 5:
            // One object's marker byte replaced: counted lengths, other types, ASCII turned UTF-16.
            let table = Int(truncatingIfNeeded: bytes[(bytes.count - 8)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            guard table > 8, table < bytes.count else { return "metadata.plist has no objects" }
            let position = Int.random(in: 8..<table, using: &random)
            let marker = [0x1F, 0x13, 0x14, 0x21, 0x23, 0x33, 0x4F, 0x5F, 0x6F, 0x61, 0x8F, 0x88, 0xAF, 0xDF, 0x00, 0x0F, 0x70, 0xC1, 0xFF]
                .randomElement(using: &random)!
            bytes[position] = UInt8(marker)
            description = "metadata.plist byte \(position) = 0x\(String(marker, radix: 16))"
        default:
            let (hostile, what) = HostileValues.plists.randomElement(using: &random)!
            bytes = [UInt8](hostile)
            description = "metadata.plist replaced by \(what)"
        }
        parts.members[index].data = Data(bytes)
        return description
    }

    private static func write(_ value: UInt64, width: Int, into bytes: inout [UInt8], at position: Int) {
        for index in 0..<width where position + index >= 0 && position + index < bytes.count {
            bytes[position + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - index)))
        }
    }
}

/// Hostile values, as the JSON text that goes into a record.
enum HostileValues {
    private static func texts(_ values: [String]) -> [[UInt8]] { values.map { Array($0.utf8) } }

    static let integers = texts([
        "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "9007199254740993",
        "-9007199254740993", "4294967296", "2147483648", "-2147483649", "0", "-0", "1", "-1", "1e2", "1E2", "1.0", "0.5",
        "100000000000000000000000000000", "1e400", "-1e400", "1e-400", "00", "01", "+1", "0x10", "1_000",
    ])

    static let doubles = texts([
        "-0.0", "0.0", "-0", "1e308", "1.7976931348623157e308", "-1.7976931348623157e308", "1.7976931348623159e308", "1e309",
        "5e-324", "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "2.2250738585072014e-308",
        "2.225073858507201e-308", "1e-320", "0.1", "0.30000000000000004", "9007199254740993", "9223372036854775807",
        "123456789.123456789123456789123456789", "1.00000000000000000000000000001", "1e-400", "-1e-400",
        "\"Infinity\"", "\"-Infinity\"", "\"NaN\"", "\"infinity\"", "\"+Infinity\"", "\"1.5\"", "NaN", "Infinity", "-",
        "1.", ".5", "1e", "1e+", "0.0e0", "-0e-0",
    ])

    static let dateTexts = [
        "1999-05-01T10:00:00.000Z", "2025-03-01T07:00:00.1234567890123456789Z", "2025-03-01T07:00:00.99999999999999999999Z",
        "2025-03-01T07:00:00.0000000000000000001Z", "2025-03-01T07:00:00." + String(repeating: "9", count: 400) + "Z",
        "0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.9999999999999999Z",
        "10000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "+2025-03-01T07:00:00Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z",
        "2024-02-30T00:00:00Z", "2024-12-31T23:59:60Z", "2025-03-01T24:00:00Z", "2025-03-01T07:60:00Z", "2025-13-01T07:00:00Z",
        "2025-00-01T07:00:00Z", "2025-03-00T07:00:00Z", "2025-03-01T07:00:00+00:00", "2025-03-01T07:00:00+01:00",
        "2025-03-01T07:00:00", "2025-03-01 07:00:00Z", "2025-03-01t07:00:00z", "2025-03-01T07:00:00.Z", "2025-03-01T07:00:00,5Z",
        "2025-3-1T7:0:0Z", "2025-03-01T07:00Z", "2025-03-01", "\u{FF12}025-03-01T07:00:00Z", "2025-03-01T07:00:00.5e3Z",
        "2025-03-01T07:00:00.-5Z", "1970-01-01T00:00:00Z", "2001-01-01T00:00:00Z", "2000-12-31T23:59:59.9999999999Z",
        "1969-12-31T23:59:59.999999Z", "2001-01-01T00:00:00.00000000000000000000000001Z", "2025-03-01T07:00:00.000000000000000000000Z",
        "1582-10-10T00:00:00Z", "2025-03-01T07:00:00\u{0}Z", "",
    ]

    static let dates =
        dateTexts.map { ArchiveFuzzer.quoted($0) }
        + texts([
            "0", "-0", "-0.0", "1e300", "-1e300", "9007199254740993", "9223372036854775807", "-9223372036854775808", "\"Infinity\"",
            "\"-Infinity\"", "\"NaN\"", "1e-320", "3.5e15", "-63114076800", "252423993600", "0.1", "2251799813685249", "-2251799813685249",
            "4503599627370497",
        ])

    static let strings: [[UInt8]] =
        texts([
            "\"a\\u0000b\"", "\"\\u0000\"", "\"\\u0000\\u0000\"", "\"\\ud800\"", "\"\\udfff\"", "\"\\ud800\\u0041\"", "\"\\udc00\\ud800\"",
            "\"\\udbff\\udfff\"", "\"\\ud83d\\ude00\"", "\"e\\u0301\"", "\"\\u00e9\"", "\"\\u202e\\u2066abc\"", "\"\\u001b[31mred\"",
            "\"\\ufeff\"", "\"\\uffff\"", "\"\\ufffd\"", "\"\\/\"", "\"\"", "\" \"", "\"\\t\\r\\n\\b\\f\"", "\"\\u0085\\u2028\\u2029\"",
            "\"\\x41\"", "\"\\u00\"", "\"\\U0041\"", "\"'\"", "\"Infinity\"", "\"NaN\"", "\"null\"",
            "\"00000000-0000-0000-0000-000000000000\"",
            "\"singleton-player-profile\"", "\"\\u0130\\u0131\"", "\"\\u1e9e\\u00df\"",
        ]) + [
            [0x22, 0x00, 0x22], [0x22, 0x61, 0x00, 0x62, 0x22], [0x22, 0x1F, 0x22], [0x22, 0x7F, 0x22], [0x22, 0xC3, 0x28, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xFF, 0x22],
            [0x22, 0xE2, 0x82, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22], [0x22, 0xEF, 0xBF, 0xBE, 0x22],
            [0x22] + [UInt8](repeating: 0x78, count: 1 << 10) + [0x22],
            [0x22] + [UInt8](repeating: 0x78, count: 64 << 10) + [0x22],
            [0x22] + [UInt8](repeating: 0x78, count: 1 << 20) + [0x22],
            [0x22] + Array(String(repeating: "\\u0000", count: 100_000).utf8) + [0x22],
            [0x22] + Array(String(repeating: "e\u{301}", count: 50_000).utf8) + [0x22],
            [0x22] + Array((0..<32).map { String(format: "\\u%04x", $0) }.joined().utf8) + [0x22],
        ]

    static let booleans = texts(["true", "false", "0", "1", "\"true\"", "null", "True", "tru"])

    static let arrays: [[UInt8]] =
        texts([
            "[]", "[0]", "[-9223372036854775808,9223372036854775807]", "[1.5]", "[1.0]", "[-0]", "[\"1\"]", "[null]", "[[1]]", "[true]",
            "{\"a\":[1]}", "[1,]", "[,1]", "[9223372036854775808]", "[1e2]", "{}", "\"[1,2]\"", "[\"\\ud800\"]", "[\"a\\u0000b\"]",
        ]) + [
            Array(("[" + Array(repeating: "7", count: 100_000).joined(separator: ",") + "]").utf8),
            Array(("[" + (0..<100_000).map(String.init).joined(separator: ",") + "]").utf8),
            Array(("[" + (0..<10_000).map { _ in "-9223372036854775808" }.joined(separator: ",") + "]").utf8),
        ]

    static let primaryKeys = texts([
        "0", "-1", "9223372036854775807", "-9223372036854775808", "2147483648", "4294967296", "9007199254740993", "1.0", "1e2",
        "\"1\"", "null", "true", "[1]", "{}", "-0", "2",
    ])

    static let toOneKeys = texts([
        "0", "-1", "999999", "9223372036854775807", "-9223372036854775808", "\"1\"", "1.0", "true", "[1]", "{}", "null", "1", "2", "3",
        "-0",
    ])

    static let wrongTypes = texts([
        "null", "true", "false", "0", "-1", "1.5", "\"x\"", "[]", "[1]", "{}", "{\"a\":1}", "\"\"", "[null]", "{\"textBytes\":\"/w==\"}",
        "{\"textBytes\":\"not base64\"}", "{\"textBytes\":1}", "{\"textBytes\":\"\"}",
    ])

    static let extraKeys: [[UInt8]] =
        texts([
            "\"extra\"", "\"_opt\"", "\"\"", "\"\\u0000\"", "\"_PK\"", "\"_pk \"", "\"\\ud800\"", "\"__proto__\"", "\"Z_PK\"", "\"Z_ENT\"",
            "\"textBytes\"",
        ]) + [[0x22, 0xC3, 0x28, 0x22]]

    static let wholeLines: [[UInt8]] =
        texts([
            "", " ", "{}", "null", "[]", "{\"_pk\":1}", "{\"_pk\":null}", "\"x\"", "1", "{", "}", "{\"_pk\":1,}", "{\"_pk\":1}{\"_pk\":2}",
            "{\"_pk\":1 \"a\":2}", "\u{FEFF}{}", "{\"_pk\":1}\r",
        ]) + [[0x00], [0xFF, 0xFE], Array(String(repeating: "[", count: 100_000).utf8)]

    static let limits: [UInt64] = [
        0, 1, 7, 8, 0xFF, 0x100, 0xFFFF, 0xFFFF_FFFF, 1 << 32, 1 << 61, 1 << 62, UInt64(Int64.max), 1 << 63, UInt64.max - 15,
        UInt64.max - 1, UInt64.max,
    ]

    static let plistValues: [PropertyListValue] = [
        .string("a\u{0}b"), .string(""), .string(String(repeating: "x", count: 100_000)), .string("e\u{301}"), .string("\u{202E}"),
        .string("😀"), .integer(Int64.min), .integer(Int64.max), .integer(-1), .real(.nan), .real(-0.0), .real(.infinity),
        .real(.leastNonzeroMagnitude), .boolean(true), .data(Data()), .data(Data(count: 16)), .data(Data(count: 1 << 20)), .uid(UInt64.max),
        .array([]), .array([.string("1.0.0"), .string("2.0.0")]), .array([.integer(1)]),
        .dictionary([:]), .dictionary(["a": .string("b")]),
        (0..<62).reduce(PropertyListValue.integer(1)) { inner, _ in .array([inner]) },
    ]

    /// Whole hostile plists: each of these once crashed, bloated or confused a reader.
    static let plists: [(Data, String)] = {
        func bigEndian(_ value: UInt64, width: Int) -> [UInt8] { RawPlist.bigEndian(value, width: width) }
        func withField(_ data: Data, _ field: Int, _ value: UInt64) -> Data {
            var bytes = [UInt8](data)
            bytes.replaceSubrange((bytes.count - 32 + field)..<(bytes.count - 24 + field), with: bigEndian(value, width: 8))
            return Data(bytes)
        }
        func assemble(_ objects: [[UInt8]], offsetWidth: Int = 1, offsets: [UInt64]? = nil) -> Data {
            RawPlist.assemble(objects, offsetWidth: offsetWidth, offsets: offsets)
        }
        let forty = BinaryPropertyList.encode(.array((0..<40).map { .integer($0) }))
        let count = 60_000
        let array: [UInt8] = [0xAF, 0x11] + bigEndian(UInt64(count), width: 2) + [UInt8](repeating: 1, count: count)
        let blob: [UInt8] = [0x4F, 0x12] + bigEndian(65_536, width: 4) + [UInt8](repeating: 0x5A, count: 65_536)
        let blobOffset = UInt64(8 + array.count)
        var doubling: [[UInt8]] = []
        for index in 0..<39 { doubling.append([0xA2, UInt8(index + 1), UInt8(index + 1)]) }
        doubling.append([0x51, 0x61])
        return [
            (withField(forty, 24, UInt64.max - 15), "the trailer overflow (offset table at 2^64 - 16)"),
            (withField(forty, 8, 1 << 61), "an object count of 2^61"),
            (withField(forty, 16, UInt64.max), "a top object of 2^64 - 1"),
            (
                assemble([array, blob], offsetWidth: 4, offsets: [8, blobOffset] + [UInt64](repeating: blobOffset, count: 15_000)),
                "60,000 references to one 64 KiB data object"
            ),
            (assemble(doubling), "arrays that each hold the next twice"),
            (assemble([[0xA1, 0]]), "an array that holds itself"),
            (assemble([[0x53, 0x61, 0xE9, 0x62]]), "an ASCII string with a byte 0xE9"),
            (assemble([[0x62, 0x00, 0x61, 0xD8, 0x00]]), "a UTF-16 string with a lone surrogate"),
            (assemble([[0xD2, 1, 2, 3, 4], [0x51, 0x61], [0x51, 0x61], [0x10, 1], [0x10, 2]]), "a dictionary with one key twice"),
            (assemble([[0x8F] + [UInt8](repeating: 0xAB, count: 16)]), "a 16-byte UID"),
            (Data("bplist00".utf8), "the magic alone"), (Data(), "nothing"),
            (Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict/></plist>".utf8), "an XML plist"),
            (TransformableArray.archive([.integer(1), .integer(2)]), "a keyed archive of an array"),
        ]
    }()
}

/// Just enough JSON for the fuzzer: split a record line into its keys and values as written,
/// and decode values to compare them after a round trip (strings as UTF-8 bytes, integers
/// exactly, other numbers as Doubles).
enum FuzzJSON {
    indirect enum Value: Equatable {
        case null
        case boolean(Bool)
        case integer(Int64)
        case number(Double)
        case string([UInt8])
        case array([Value])
        case object([[UInt8]: Value])
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// The members of a one-object line as written, or nil when it is not one object.
    static func members(_ line: [UInt8]) -> [(key: [UInt8], value: [UInt8])]? {
        var position = 0
        func skip() { while position < line.count, isSpace(line[position]) { position += 1 } }
        skip()
        guard position < line.count, line[position] == UInt8(ascii: "{") else { return nil }
        position += 1
        skip()
        var members: [(key: [UInt8], value: [UInt8])] = []
        if position < line.count, line[position] == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                skip()
                guard position < line.count, line[position] == UInt8(ascii: "\""), let keyEnd = endOfString(line, position) else {
                    return nil
                }
                let key = Array(line[position..<keyEnd])
                position = keyEnd
                skip()
                guard position < line.count, line[position] == UInt8(ascii: ":") else { return nil }
                position += 1
                skip()
                guard let valueEnd = endOfValue(line, position), valueEnd > position else { return nil }
                members.append((key, Array(line[position..<valueEnd])))
                position = valueEnd
                skip()
                guard position < line.count else { return nil }
                if line[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard line[position] == UInt8(ascii: "}") else { return nil }
                position += 1
                break
            }
        }
        skip()
        return position == line.count ? members : nil
    }

    /// At a quote: the index after the closing quote.
    private static func endOfString(_ bytes: [UInt8], _ start: Int) -> Int? {
        var position = start + 1
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\\"): position += 2
            case UInt8(ascii: "\""): return position + 1
            default: position += 1
            }
        }
        return nil
    }

    private static func endOfValue(_ bytes: [UInt8], _ start: Int) -> Int? {
        var position = start
        var depth = 0
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                guard let end = endOfString(bytes, position) else { return nil }
                position = end
                if depth == 0 { return position }
                continue
            case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if depth == 0 { return position }
                depth -= 1
                if depth == 0 { return position + 1 }
            case UInt8(ascii: ","):
                if depth == 0 { return position }
            default:
                if depth == 0 && isSpace(byte) { return position }
            }
            position += 1
        }
        return depth == 0 ? position : nil
    }

    static func decodeKey(_ raw: [UInt8]) -> String? {
        guard case .string(let bytes)? = decode(raw) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func decode(_ raw: [UInt8]) -> Value? {
        var position = 0
        let value = parse(raw, &position, depth: 0)
        while position < raw.count, isSpace(raw[position]) { position += 1 }
        return position == raw.count ? value : nil
    }

    private static func parse(_ bytes: [UInt8], _ position: inout Int, depth: Int) -> Value? {
        guard depth < 200 else { return nil }
        while position < bytes.count, isSpace(bytes[position]) { position += 1 }
        guard position < bytes.count else { return nil }
        func literal(_ text: String, _ value: Value) -> Value? {
            let expected = Array(text.utf8)
            guard bytes.count - position >= expected.count, Array(bytes[position..<position + expected.count]) == expected else {
                return nil
            }
            position += expected.count
            return value
        }
        switch bytes[position] {
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "t"): return literal("true", .boolean(true))
        case UInt8(ascii: "f"): return literal("false", .boolean(false))
        case UInt8(ascii: "\""):
            guard let end = endOfString(bytes, position), let text = unescape(Array(bytes[(position + 1)..<(end - 1)])) else { return nil }
            position = end
            return .string(text)
        case UInt8(ascii: "["):
            position += 1
            var elements: [Value] = []
            while true {
                while position < bytes.count, isSpace(bytes[position]) { position += 1 }
                guard position < bytes.count else { return nil }
                if bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(elements)
                }
                if !elements.isEmpty {
                    guard bytes[position] == UInt8(ascii: ",") else { return nil }
                    position += 1
                }
                guard let element = parse(bytes, &position, depth: depth + 1) else { return nil }
                elements.append(element)
            }
        case UInt8(ascii: "{"):
            position += 1
            var members: [[UInt8]: Value] = [:]
            while true {
                while position < bytes.count, isSpace(bytes[position]) { position += 1 }
                guard position < bytes.count else { return nil }
                if bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                }
                if !members.isEmpty {
                    guard bytes[position] == UInt8(ascii: ",") else { return nil }
                    position += 1
                }
                guard case .string(let key)? = parse(bytes, &position, depth: depth + 1) else { return nil }
                while position < bytes.count, isSpace(bytes[position]) { position += 1 }
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
                position += 1
                guard let value = parse(bytes, &position, depth: depth + 1) else { return nil }
                members[key] = value
            }
        default:
            let start = position
            while position < bytes.count, "+-.0123456789eE".utf8.contains(bytes[position]) { position += 1 }
            let text = String(decoding: bytes[start..<position], as: UTF8.self)
            if let integer = Int64(text), !text.contains(where: { ".eE".contains($0) }) { return .integer(integer) }
            return Double(text).map { .number($0) }
        }
    }

    /// A string's contents as UTF-8 bytes, escapes resolved; nil for a lone surrogate escape.
    private static func unescape(_ bytes: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        var position = 0
        func hex() -> UInt32? {
            guard position + 4 <= bytes.count,
                let value = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
            else { return nil }
            position += 4
            return value
        }
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                continue
            }
            guard position < bytes.count else { return nil }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex() else { return nil }
                if (0xD800...0xDBFF).contains(scalar) {
                    guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                        return nil
                    }
                    position += 2
                    guard let low = hex(), (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                output += Array(String(unicode).utf8)
            default: output.append(escape)
            }
        }
        return output
    }

    private static func textBytes(_ members: [[UInt8]: Value]) -> [UInt8]? {
        guard members.count == 1, case .string(let encoded)? = members[Array("textBytes".utf8)],
            let bytes = Data(base64Encoded: String(decoding: encoded, as: UTF8.self))
        else { return nil }
        return [UInt8](bytes)
    }

    /// Whether two values that are not the same differ only in the sign of a zero (SQLite
    /// keeps -0.0 in a REAL column as the integer 0, so no store can hold it).
    static func differOnlyInZeroSign(_ input: Value, _ output: Value) -> Bool {
        func zero(_ value: Value) -> Bool {
            switch value {
            case .number(let number): return number == 0
            case .integer(let number): return number == 0
            case .string(let bytes): return String(decoding: bytes, as: UTF8.self) == "2001-01-01T00:00:00Z"
            default: return false
            }
        }
        if case .array(let a) = input, case .array(let b) = output, a.count == b.count {
            return zip(a, b).allSatisfy { sameValue($0, $1) || differOnlyInZeroSign($0, $1) }
        }
        guard case .number(let number) = input, number == 0, number.sign == .minus else { return false }
        return zero(output)
    }

    /// Whether a value came back as it went in: the same text (a date as the same instant),
    /// the same integer, the same Double bit for bit (an integer into a Double as Double(n)).
    static func sameValue(_ input: Value, _ output: Value) -> Bool {
        func instant(_ value: Value) -> Double? {
            switch value {
            case .integer(let number): return Double(number)
            case .number(let number): return number
            case .string(let bytes):
                let text = String(decoding: bytes, as: UTF8.self)
                return DateText.secondsSinceReferenceDate(iso8601: text) ?? ["Infinity": .infinity, "-Infinity": -.infinity][text]
            default: return nil
            }
        }
        switch (input, output) {
        case (.null, .null): return true
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.number(let a), .number(let b)): return a.bitPattern == b.bitPattern
        case (.integer(let a), .number(let b)): return Double(a).bitPattern == b.bitPattern
        case (.number(let a), .integer(let b)): return a.bitPattern == Double(b).bitPattern
        case (.string(let a), .string(let b)) where a == b: return true
        case (.string(let a), .object(let members)):
            // Text that is not UTF-8 travels as {"textBytes": base64}.
            return textBytes(members).map { $0 == a } ?? false
        case (.object(let members), .string(let b)):
            // {"textBytes": …} of valid UTF-8 comes back as plain text: the same bytes.
            return textBytes(members).map { $0 == b } ?? false
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { sameValue($0, $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { sameValue(value, $0) } ?? false }
        default:
            // A date: as text or a number, the same instant.
            guard let a = instant(input), let b = instant(output) else { return false }
            return a.bitPattern == b.bitPattern
        }
    }
}

extension ArchiveFuzzer {
    /// The fuzzed archives are TimeQuest's: an accepted one is exported again by its profile.
    static var exportOptions: Exporter.Options {
        var options = Exporter.Options(createdAt: 1_700_000_000, compression: .none)
        options.profiles = [.timeQuest]
        return options
    }
}
