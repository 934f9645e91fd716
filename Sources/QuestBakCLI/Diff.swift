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
                let result = try Differ.diff(
                    URL(fileURLWithPath: a), URL(fileURLWithPath: b), keys: try archiveKeys.keys(), profiles: [.timeQuest],
                    workDirectory: work,
                    progress: progress.callback)
                progress.finish()
                same = result.isEmpty
                if json {
                    print(try JSONOutput.render(result))
                    return
                }
                var lines: [String] = []
                if result.comparedBy == "tables" {
                    lines.append("compared by table and column (one side is an archive by its tables)")
                }
                for entity in result.entities where !entity.isEmpty || !entity.fieldsOnlyInA.isEmpty || !entity.fieldsOnlyInB.isEmpty {
                    lines.append(
                        "\(entity.name): \(entity.added.count) added, \(entity.removed.count) removed, \(entity.changed.count) changed (matched by \(entity.matchedBy))"
                    )
                    if !entity.fieldsOnlyInB.isEmpty {
                        lines.append("  only in B (added): \(entity.fieldsOnlyInB.joined(separator: ", "))")
                    }
                    if !entity.fieldsOnlyInA.isEmpty {
                        lines.append("  only in A (removed): \(entity.fieldsOnlyInA.joined(separator: ", "))")
                    }
                    guard !stat else { continue }
                    lines += entity.added.map { "  + \($0)" }
                    lines += entity.removed.map { "  - \($0)" }
                    for change in entity.changed {
                        lines.append(
                            "  ~ \(change.identity): " + change.fields.map { "\($0.field) \($0.old) → \($0.new)" }.joined(separator: ", "))
                    }
                }
                lines.append("\(result.added) added, \(result.removed) removed, \(result.changed) changed")
                print(lines.joined(separator: "\n"))
            }
            if !same { throw ExitCode(ExitStatus.failure.rawValue) }
        }
    }
}
