import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Name every property of a model that breaks CloudKit's rules.",
            discussion: """
                The model is a store (its own model, read from Z_MODELCACHE), a schema file (JSON, see `questbak schema`) or a \
                built-in version. CloudKit mirroring (NSPersistentCloudKitContainer, SwiftData's cloudKitDatabase) requires a \
                default for every non-optional attribute, every relationship optional and with an inverse, no unique \
                constraints, no deny delete rule and no ordered relationships. Exits 0 when the model breaks none, 2 with one \
                line per finding otherwise (--json: the findings as JSON).

                Examples: `questbak lint 2.0.0` (TimeQuest V2: its to-many relationships are not optional, so exit 2); \
                `questbak lint Fixtures/AnyApp/kitchen-sink/default.store --json` (a unique constraint and relationships without \
                an inverse, exit 2); `questbak schema 2.0.0 > v2.json && questbak lint v2.json` (the same as the first).
                """
        )

        @Argument(help: "The model: a store, a schema file or a built-in version.", completion: .file())
        var model: String

        @Flag(help: "Print the findings as JSON.")
        var json = false

        struct Report: Encodable {
            var model: String
            var findings: [CloudKitLint.Finding]
        }

        func run() throws {
            var findings: [CloudKitLint.Finding] = []
            try reportingFailures(json: json) {
                findings = CloudKitLint.findings(try ModelArgument.modelVersion(model))
                if json {
                    print(try JSONOutput.render(Report(model: model, findings: findings)))
                } else if findings.isEmpty {
                    print("\(model): no property breaks CloudKit's rules")
                } else {
                    for finding in findings {
                        print("\(finding.entity).\(finding.property): \(finding.rule.rawValue): \(finding.message)")
                    }
                    print("\(findings.count) finding\(findings.count == 1 ? "" : "s") in \(model)")
                }
            }
            if !findings.isEmpty { throw ExitCode(ExitStatus.repairsNeeded.rawValue) }
        }
    }
}
