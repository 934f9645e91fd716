import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prove that an archive restores: restore it into a scratch folder and compare every member.",
            discussion: """
                A checksum proves the bytes, not that a backup restores. verify restores the archive into a scratch folder \
                as import would (every member checked, the store written, integrity_check, read back), encodes every \
                restored entity again and compares it with its member. Exits 0 only when the archive restores exactly; 2 \
                when a restore would change something (repairs, data the store cannot hold: see --json), with what; 65 or \
                74 when the archive is damaged. Nothing is written outside the scratch folder.
                """
        )

        @Argument(help: "The archive to verify.", completion: .file())
        var archive: String

        @OptionGroup var archiveKeys: ArchiveKeyOptions

        @Flag(help: "Print the result as JSON.")
        var json = false

        @OptionGroup var progressOptions: ProgressOptions

        func run() throws {
            var exact = true
            try reportingFailures(json: json) {
                let work = try TemporaryDirectory.create(prefix: "questbak-work")
                defer { TemporaryDirectory.remove(work) }
                let progress = progressOptions.reporter(command: "verify", quiet: json)
                defer { progress.abandon() }
                let result = try ArchiveVerifier.verify(
                    archive: archive, keys: try archiveKeys.keys(), profiles: [.timeQuest], workDirectory: work, progress: progress.callback
                )
                progress.finish()
                exact = result.restoresExactly
                if json {
                    print(try JSONOutput.render(result))
                    return
                }
                var lines = [
                    "\(archive): " + (exact ? "restores exactly" : "does not restore exactly")
                        + " (format \(result.formatVersion), \(result.schema))"
                ]
                let width = result.entities.map(\.name.count).max() ?? 0
                for entity in result.entities {
                    lines.append(
                        "  " + entity.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                            + String(entity.records).leftPadded(8)
                            + " records  " + (entity.same ? "same as archived" : "differs from the archived member"))
                }
                let changes = result.counts.filter { !$0.key.hasPrefix("bookkeeping.") }.sorted { $0.key < $1.key }
                if !changes.isEmpty {
                    lines.append("a restore would make: " + changes.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
                }
                lines += result.notes.map { "note: " + $0 }
                print(lines.joined(separator: "\n"))
            }
            if !exact { throw ExitCode(ExitStatus.repairsNeeded.rawValue) }
        }
    }
}
