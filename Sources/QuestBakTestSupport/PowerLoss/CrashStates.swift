import Crypto
import Foundation
import QuestBakFixtures

/// The states a power loss may leave after each prefix of a recording, by the rules POSIX gives
/// (the model of ALICE and CrashMonkey):
/// - a file's writes and truncations before its last fsync are on disk; any subset of the later
///   ones may be lost, and a lost write may be torn at 512-byte sectors;
/// - a create, rename, link, unlink, mkdir or rmdir before the last fsync of its directory is on
///   disk; any subset of the later ones may be lost (those kept happen in their order);
/// - an fsync of a file does not make its name durable, nor does anything but an fsync of the
///   directory (ext4 often does more; questbak must not count on it).
public struct CrashStateExplorer {
    public let recording: CrashRecording
    /// Prefixes with at most this many operations not yet durable are explored exhaustively
    /// (2^n states); beyond, `samples` seeded states.
    public var exhaustiveLimit: Int
    public var samples: Int
    public var seed: UInt64

    public init(recording: CrashRecording, exhaustiveLimit: Int, samples: Int, seed: UInt64) {
        self.recording = recording
        self.exhaustiveLimit = exhaustiveLimit
        self.samples = samples
        self.seed = seed
    }

    /// What becomes of one operation that is not yet durable.
    public enum Fate: Hashable, Sendable {
        case applied
        case lost
        /// A write of which only these 512-byte sectors (indexes from the write's first) reached the disk.
        case torn(Set<Int>)
    }

    /// A file or folder tree: relative path → bytes (folders end in "/").
    public typealias Files = [String: [UInt8]]

    /// The operations of the first `count` that are not durable when the power goes.
    public func volatile(prefix count: Int) -> [Int] {
        let operations = recording.operations[0..<count]
        var lastFileSync: [Int: Int] = [:]
        var lastDirectorySync: [String: Int] = [:]
        for (index, operation) in operations.enumerated() {
            switch operation {
            case .sync(let file): lastFileSync[file] = index
            case .syncDirectory(let path): lastDirectorySync[path] = index
            default: break
            }
        }
        return operations.indices.filter { index in
            let operation = operations[index]
            if let file = operation.changedFile { return (lastFileSync[file] ?? -1) < index }
            let directories = operation.directoryEntries.map(Self.parent)
            return directories.contains { (lastDirectorySync[$0] ?? -1) < index }
        }
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }

    /// The state after the first `count` operations with the volatile ones' `fates` (absent: applied).
    public func state(prefix count: Int, fates: [Int: Fate]) -> Files {
        var contents: [Int: [UInt8]] = [:]
        var names: [String: Int] = [:]
        var folders = Set(recording.initial.keys.filter { $0.hasSuffix("/") })
        for index in 0..<count {
            let fate = fates[index] ?? .applied
            let operation = recording.operations[index]
            if fate == .lost { continue }
            switch operation {
            case .existing(let file, let path):
                contents[file] = recording.initial[path] ?? []
                names[path] = file
            case .create(let file, let path):
                contents[file] = []
                names[path] = file
            case .write(let file, let offset, let length, let dataOffset):
                let source = recording.data[dataOffset..<dataOffset + length]
                // Changed in place (the dictionary's modify accessor): a copy per write would make
                // every state cost the whole recording's bytes again and again.
                Self.change(&contents[file, default: []]) { bytes in
                    var pieces = [(offset, offset + length)]
                    if case .torn(let sectors) = fate {
                        // Sector k of the write covers its bytes from the k-th 512-byte boundary of the file on.
                        let first = offset / 512
                        pieces = sectors.sorted().map { (max(offset, (first + $0) * 512), min(offset + length, (first + $0 + 1) * 512)) }
                    }
                    for (start, end) in pieces where start < end {
                        if bytes.count < end { bytes += [UInt8](repeating: 0, count: end - bytes.count) }
                        bytes.replaceSubrange(start..<end, with: source[(dataOffset + start - offset)..<(dataOffset + end - offset)])
                    }
                }
            case .truncate(let file, let size):
                Self.change(&contents[file, default: []]) { bytes in
                    if bytes.count > size {
                        bytes.removeSubrange(size...)
                    } else {
                        bytes += [UInt8](repeating: 0, count: size - bytes.count)
                    }
                }
            case .rename(let from, let to):
                // A rename whose source was itself lost has nothing to move.
                guard let file = names[from] else { continue }
                names[to] = file
                names[from] = nil
            case .link(let from, let to):
                guard let file = names[from] else { continue }
                names[to] = file
            case .unlink(let path): names[path] = nil
            case .makeDirectory(let path): folders.insert(path + "/")
            case .removeDirectory(let path): folders.remove(path + "/")
            case .sync, .syncDirectory, .close: break
            }
        }
        // A name inside a folder whose own entry was lost is lost with it.
        func reachable(_ path: String) -> Bool {
            let parent = Self.parent(path.hasSuffix("/") ? String(path.dropLast()) : path)
            return parent == "." || (folders.contains(parent + "/") && reachable(parent + "/"))
        }
        var files: Files = [:]
        for folder in folders where reachable(folder) { files[folder] = [] }
        for (path, file) in names where reachable(path) { files[path] = contents[file] ?? [] }
        return files
    }

    static func change(_ bytes: inout [UInt8], _ body: (inout [UInt8]) -> Void) { body(&bytes) }

    /// The state after the whole recording, everything applied: what the directory holds.
    public var finalState: Files { state(prefix: recording.operations.count, fates: [:]) }

    /// The fates to explore for a prefix: every combination when few operations are volatile,
    /// else all applied, all lost, and `samples` seeded combinations, some cut in order (as a
    /// file system that keeps its order would lose them) and some with torn writes.
    func fateSets(prefix count: Int) -> [[Int: Fate]] {
        let volatile = volatile(prefix: count)
        if volatile.count <= exhaustiveLimit {
            return (0..<(1 << volatile.count)).map { mask in
                var fates: [Int: Fate] = [:]
                for (bit, index) in volatile.enumerated() where mask & (1 << bit) == 0 { fates[index] = .lost }
                return fates
            }
        }
        var generator = SeededGenerator(seed: seed &+ UInt64(count) &* 0x9E37_79B9)
        var sets: [[Int: Fate]] = [[:], Dictionary(uniqueKeysWithValues: volatile.map { ($0, Fate.lost) })]
        for sample in 0..<samples {
            var fates: [Int: Fate] = [:]
            if sample % 4 == 0 {
                let cut = Int.random(in: 0..<volatile.count, using: &generator)
                for index in volatile[cut...] { fates[index] = .lost }
            } else {
                for index in volatile {
                    switch Int.random(in: 0..<8, using: &generator) {
                    case 0..<4: fates[index] = .lost
                    case 4 where sample % 2 == 1:
                        if case .write(_, let offset, let length, _) = recording.operations[index], length > 512 {
                            let sectors = (offset + length - 1) / 512 - offset / 512 + 1
                            fates[index] = .torn(Set((0..<sectors).filter { _ in Bool.random(using: &generator) }))
                        }
                    default: break
                    }
                }
            }
            sets.append(fates)
        }
        return sets
    }

    /// The prefixes explored: from the files found at the start (`existing`) to the whole log.
    public var prefixes: ClosedRange<Int> {
        recording.operations.prefix { if case .existing = $0 { return true } else { return false } }.count...recording.operations.count
    }

    /// Whether a prefix's states are all explored, not sampled.
    public func isExhaustive(prefix count: Int) -> Bool { volatile(prefix: count).count <= exhaustiveLimit }

    /// Every state of every prefix, in order, each with the prefix it came from. Prefixes start
    /// after the files found at the start (`existing`), which are there before the run.
    public func forEachState(_ body: (_ prefix: Int, _ state: Files) throws -> Void) rethrows {
        for count in prefixes {
            for fates in fateSets(prefix: count) { try body(count, state(prefix: count, fates: fates)) }
        }
    }

    /// A short digest of a state, to check each distinct state once.
    public static func key(_ files: Files, only paths: Set<String>? = nil) -> String {
        var hasher = SHA256()
        for path in files.keys.sorted() where paths?.contains(path) ?? true {
            hasher.update(data: Data(path.utf8))
            hasher.update(data: Data([0]))
            hasher.update(data: Data(SHA256.hash(data: files[path] ?? [])))
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
