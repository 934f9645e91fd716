import CoreDataStore
import Foundation
import QuestBakArchive

extension Differ {
    /// An archive B read on a thread of its own while a store A is read: each member's first
    /// record line as it comes (A's member whose first line is B's is loaded thin, `ThinTables`),
    /// and, once read to its end and every member's SHA-256 checked, what B's side is made of.
    /// When every member of B is then A's twin (or holds no record), B is not read again: its
    /// side is what `side(of:)` makes of the same read (`side(from:twin:)`), and reading it
    /// again would load nothing. Otherwise, or when this read failed, B is read as before (and
    /// any error is met there, after A's, as before).
    final class ArchiveAhead: @unchecked Sendable {
        /// What one read of the archive found.
        struct Read {
            var manifest: ArchiveManifest
            var firstLines: [String: [UInt8]]
            var modelCache: Data?
        }

        private struct Stop: Error {}

        private let condition = NSCondition()
        // Guarded by `condition`.
        private var manifest: ArchiveManifest?
        private var firstLines: [String: [UInt8]] = [:]
        private var done = false
        private var stopping = false
        private var read: Read?

        init(_ url: URL, keys: ArchiveKeys) {
            let thread = Thread { [self] in run(url, keys: keys) }
            thread.start()
        }

        private func run(_ url: URL, keys: ArchiveKeys) {
            var found: Read?
            var modelCache: Data?
            var lines: [String: [UInt8]] = [:]
            do {
                var manifest: ArchiveManifest?
                _ = try ArchiveReader(path: url.path, displayPath: url.path, keys: keys).read(
                    onManifest: { read in
                        manifest = read
                        publish { self.manifest = read }
                    },
                    onRecordLine: { member, number, line in
                        if number == 2 {
                            lines[member.name] = [UInt8](line)
                            publish { self.firstLines[member.name] = [UInt8](line) }
                        }
                        if number % 4096 == 0, isStopping { throw Stop() }
                    },
                    onFile: { member, data in if member.path == ArchiveManifest.modelCachePath { modelCache = data } })
                if let manifest { found = Read(manifest: manifest, firstLines: lines, modelCache: modelCache) }
            } catch {
                found = nil
            }
            publish {
                self.read = found
                self.done = true
            }
        }

        private func publish(_ change: () -> Void) {
            condition.lock()
            change()
            condition.broadcast()
            condition.unlock()
        }

        private var isStopping: Bool {
            condition.lock()
            defer { condition.unlock() }
            return stopping
        }

        /// B's member `name` (its digest and first record line), waiting for it to be read;
        /// nil when B has none, or no record in it, or is by tables, or could not be read.
        func expected(_ name: String) -> Expected? {
            condition.lock()
            defer { condition.unlock() }
            while !done {
                if let manifest {
                    guard manifest.source.schema != ArchiveManifest.Source.genericSchema,
                        let member = manifest.entities.first(where: { $0.name == name }), member.count > 0
                    else { return nil }
                    if firstLines[name] != nil { break }
                }
                condition.wait()
            }
            guard let manifest, manifest.source.schema != ArchiveManifest.Source.genericSchema, let line = firstLines[name],
                let member = manifest.entities.first(where: { $0.name == name })
            else { return nil }
            return Expected(sha256: member.sha256, firstLine: line)
        }

        /// Waits for the read to end (asked to stop early when `stop`); what it read, or nil.
        func finish(stop: Bool = false) -> Read? {
            condition.lock()
            defer { condition.unlock() }
            if stop { stopping = true }
            while !done { condition.wait() }
            return read
        }
    }
}
