import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Diff: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what differs between two stores or archives of one app, record by record.",
            discussion: """
                A and B are each a store or an archive, possibly of different versions. Records are matched as import --merge \
                matches them, never by _pk: the same well-formed cloudID that no other record of its side shares, else a \
                uniqueness constraint of the model, else the app's natural key (TimeQuest's), else for a singleton the one \
                record, else every value equal; a relationship compares the records it names, not their _pk. Lists added, \
                removed and changed records per entity by _pk, with the changed fields (old value, then new); a property only \
                one side has (one a migration added) is named as such, not as a change. A model archive and a generic one \
                (by tables) are compared by table and column. Two stores or archives of different apps (no entity name in \
                common) are refused with 65. Exits 0 when they are the same, 1 when they differ, as diff does.
                """
        )

        @Argument(help: "A store or an archive.", completion: .file())
        var a: String

        @Argument(help: "Another store or archive of the same app.", completion: .file())
        var b: String

        @OptionGroup var archiveKeys: ArchiveKeyOptions

        @Flag(help: "Counts only.")
        var stat = false

        @Flag(help: "Print the differences as JSON.")
        var json = false

        @OptionGroup var progressOptions: ProgressOptions

        func run() throws {
            var same = true
            try reportingFailures(json: json) {
                let work = try TemporaryDirectory.create(prefix: "questbak-work")
                defer { TemporaryDirectory.remove(work) }
                let progress = progressOptions.reporter(command: "diff", quiet: json)
                defer { progress.abandon() }
                // The listing is written as it is read from the diff's scratch store, never held
                // whole: two stores can differ by millions of records.
                let output = ChunkedOutput(FileHandle.standardOutput)
                try Differ.diff(
                    URL(fileURLWithPath: a), URL(fileURLWithPath: b), keys: try archiveKeys.keys(), profiles: [.timeQuest],
                    workDirectory: work,
                    progress: progress.callback
                ) { listing in
                    progress.finish()
                    same = listing.result.isEmpty
                    if json {
                        try Self.writeJSON(listing, to: output)
                    } else {
                        try Self.writeText(listing, stat: stat, to: output)
                    }
                }
                try output.flush()
            }
            if !same { throw ExitCode(ExitStatus.failure.rawValue) }
        }

        static func writeText(_ listing: Differ.Listing, stat: Bool, to output: ChunkedOutput) throws {
            let result = listing.result
            if result.comparedBy == "tables" {
                try output.line("compared by table and column (one side is an archive by its tables)")
            }
            for entity in result.entities where !entity.isEmpty || !entity.fieldsOnlyInA.isEmpty || !entity.fieldsOnlyInB.isEmpty {
                try output.line(
                    "\(entity.name): \(entity.added) added, \(entity.removed) removed, \(entity.changed) changed (matched by \(entity.matchedBy))"
                )
                if !entity.fieldsOnlyInB.isEmpty {
                    try output.line("  only in B (added): \(entity.fieldsOnlyInB.joined(separator: ", "))")
                }
                if !entity.fieldsOnlyInA.isEmpty {
                    try output.line("  only in A (removed): \(entity.fieldsOnlyInA.joined(separator: ", "))")
                }
                guard !stat, !entity.isEmpty else { continue }
                try listing.forEachLine(of: entity.name) { line in
                    switch line {
                    case .added(let identity): try output.line("  + " + identity)
                    case .removed(let identity): try output.line("  - " + identity)
                    case .changed(let change):
                        try output.line(
                            "  ~ \(change.identity): " + change.fields.map { "\($0.field) \($0.old) → \($0.new)" }.joined(separator: ", "))
                    }
                }
            }
            try output.line("\(result.added) added, \(result.removed) removed, \(result.changed) changed")
        }

        /// The result as `--json` prints it, each entity's records streamed as the listing reads
        /// them: an entity's name and how it was matched first, then its `added`, `removed` and
        /// `changed` records (under --json the listing is given whole, with or without --stat).
        static func writeJSON(_ listing: Differ.Listing, to output: ChunkedOutput) throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            func text(_ value: some Encodable) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
            let result = listing.result
            try output.write(
                "{\n  \"a\" : \(try text(result.a.path)),\n  \"added\" : \(result.added),\n  \"b\" : \(try text(result.b.path)),\n"
                    + "  \"changed\" : \(result.changed),\n  \"comparedBy\" : \(try text(result.comparedBy)),\n  \"removed\" : \(result.removed),\n"
                    + "  \"entities\" : [")
            for (index, entity) in result.entities.enumerated() {
                try output.write(
                    (index == 0 ? "\n" : ",\n") + "    {\n      \"name\" : \(try text(entity.name)),\n"
                        + "      \"matchedBy\" : \(try text(entity.matchedBy)),\n"
                        + "      \"fieldsOnlyInA\" : \(try text(entity.fieldsOnlyInA)),\n"
                        + "      \"fieldsOnlyInB\" : \(try text(entity.fieldsOnlyInB)),\n")
                // The listing comes in the order of the keys: added, removed, changed; a key with
                // no records is an empty list.
                let keys = ["added", "removed", "changed"]
                var section = -1
                var first = true
                func enter(_ wanted: Int) throws {
                    while section < wanted {
                        if section >= 0 { try output.write((first ? "]" : "\n      ]") + ",\n") }
                        section += 1
                        try output.write("      \"\(keys[section])\" : [")
                        first = true
                    }
                }
                try listing.forEachLine(of: entity.name) { line in
                    let element: String
                    switch line {
                    case .added(let identity):
                        try enter(0)
                        element = try text(identity)
                    case .removed(let identity):
                        try enter(1)
                        element = try text(identity)
                    case .changed(let change):
                        try enter(2)
                        element = try text(change)
                    }
                    try output.write((first ? "\n        " : ",\n        ") + element)
                    first = false
                }
                try enter(2)
                try output.write((first ? "]" : "\n      ]") + "\n    }")
            }
            try output.write((result.entities.isEmpty ? "" : "\n  ") + "]\n}\n")
        }
    }
}

/// Standard output written in chunks of about 1 MiB, so that a long listing costs neither a
/// write call a line nor memory that grows with it.
final class ChunkedOutput {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) {
        self.handle = handle
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 20 { try flush() }
    }

    func line(_ text: String) throws { try write(text + "\n") }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
