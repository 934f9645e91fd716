import Foundation

/// Mutation fuzzing of `ArchiveReader`: damages a seed archive in many seeded ways, reads every
/// mutant and counts how each ended. Run by `questbak-fuzz` for long campaigns and by
/// ArchiveReaderTests for a quick one. The pass criterion is that every input ends, in time,
/// either accepted or with a typed `ArchiveError` whose message names the archive and prints
/// safely; a crash is a failure too, and leaves its input at `workDirectory/input.qbak`.
///
/// Mutations are applied either to the compressed bytes (what a damaged disk or download gives)
/// or to the tar stream inside, which is then compressed again (what a hostile writer gives:
/// valid compression around a malicious tar). Apart from TarArchive.swift this is the one file
/// that calls libarchive, for the raw compression the tar-level mutants need.
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

        public var passed: Bool { slowInputs.isEmpty && badErrors.isEmpty }

        public var description: String {
            var lines = ["inputs: \(inputs) in \(String(format: "%.1f", totalSeconds)) s"]
            for (outcome, count) in outcomes.sorted(by: { $0.value > $1.value }) {
                lines.append("  \(outcome): \(count)")
            }
            lines.append("slowest: \(String(format: "%.3f", slowestSeconds)) s (\(slowestMutation))")
            for input in slowInputs { lines.append("SLOW: \(input)") }
            if !badErrors.isEmpty { lines.append("bad errors: \(badErrors.count), the first 20:") }
            for error in badErrors.prefix(20) { lines.append("BAD: \(error)") }
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
                    FileHandle.standardError.write(Data("questbak-fuzz: HANG over \(limit) s: \(running.label); input kept at \(input.path)\n".utf8))
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

    private static func mutate(original: Data, tar: Data, compression: ArchiveCompression, using random: inout SeededGenerator) throws -> (Data, String) {
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
        if Int.random(in: 0..<5, using: &random) == 0 { target = ArchiveCompression.allCases.randomElement(using: &random)! }
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
            guard blocks >= 2 else { bytes[offset] ^= 0xFF; return "invert \(offset)" }
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
            let names = ["../evil", "/etc/passwd", "entities/../../x", "manifest.json", "entities/ROUTINE.jsonl", "MANIFEST.JSON",
                         "entities/Routine.jsonl", "store/metadata.plist", "", "entities/\u{1B}[31mred.jsonl", "./manifest.json"]
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
