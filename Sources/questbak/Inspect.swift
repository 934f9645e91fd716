import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what a store holds: schema version, entity row counts, metadata and WAL state.",
            discussion: "Works on any Core Data / SwiftData store; TimeQuest stores are also matched against the known schemas."
        )

        @Argument(help: "The store file (its -wal and -shm are read from beside it).", completion: .file())
        var store: String

        @Flag(help: "Print a JSON object instead of text.")
        var json = false

        func run() throws {
            try reportingFailures {
                let snapshot = try StoreSnapshot(storeAt: URL(fileURLWithPath: store))
                let inspection = try StoreInspection(snapshot: snapshot)
                print(json ? try JSONOutput.render(inspection) : Self.text(inspection))
            }
        }

        static func text(_ inspection: StoreInspection) -> String {
            var lines = [
                "store:               \(inspection.path)",
                "uuid:                \(inspection.uuid)",
                "version identifiers: \(inspection.versionIdentifiers.joined(separator: ", "))",
                "framework version:   \(inspection.frameworkVersion.map(String.init) ?? "unknown")",
                "model hashes:        " + (inspection.hashesMatchVersion.map { "match TimeQuest \($0)" } ?? "match no known TimeQuest schema"),
                "schema:              " + (inspection.schemaVersion.map { "TimeQuest \($0)" } ?? "not a known TimeQuest schema"),
                "WAL:                 " + (inspection.walFrames == 0 ? "no unmerged frames" : "\(inspection.walFrames) committed frames not yet in the main file"),
                "entities:",
            ]
            let width = max(6, inspection.entities.map(\.name.count).max() ?? 0)
            lines.append("  Z_ENT  " + "entity".padding(toLength: width, withPad: " ", startingAt: 0) + "      rows     Z_MAX")
            for entity in inspection.entities {
                lines.append(
                    "  " + String(entity.number).leftPadded(5) + "  " + entity.name.padding(toLength: width, withPad: " ", startingAt: 0)
                        + "  " + String(entity.rows).leftPadded(8) + "  " + String(entity.maximumPrimaryKey).leftPadded(8))
            }
            if !inspection.bookkeepingRows.isEmpty {
                lines.append("bookkeeping rows:    " + inspection.bookkeepingRows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
            if let problem = inspection.schemaProblem {
                lines.append("note: " + problem)
            }
            return lines.joined(separator: "\n")
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
