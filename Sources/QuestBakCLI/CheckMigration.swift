import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct CheckMigration: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-migration",
            abstract: "Check that a proposed model is a lightweight migration from an older one.",
            discussion: """
                Each model is a store (its own model, read from Z_MODELCACHE: an empty store made by that build of the app is \
                enough), a schema file (JSON, see `questbak schema`) or a built-in version. Exits 0 when Core Data can migrate \
                without custom code, 65 with every offending property named otherwise.
                """
        )

        @Argument(help: "The proposed model: a store, a schema file or a built-in version.", completion: .file())
        var schemaFile: String

        @Option(help: "The model it replaces: a store, a schema file or a built-in version (default: the newest built-in).")
        var from: String?

        func run() throws {
            try reportingFailures {
                let proposed = try ModelArgument.modelVersion(schemaFile)
                let old = try from.map(ModelArgument.modelVersion) ?? TimeQuestSchemas.newest
                let problems = LightweightCheck.problems(from: old, to: proposed)
                guard problems.isEmpty else {
                    throw MigrationError.notLightweight(from: old.versionIdentifier, to: proposed.versionIdentifier, problems: problems)
                }
                print("schema \(old.versionIdentifier) → \(proposed.versionIdentifier) is a lightweight migration")
            }
        }
    }
}
