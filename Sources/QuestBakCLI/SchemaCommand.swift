import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct SchemaCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "schema",
            abstract: "Print a store's own model, or a built-in schema, as JSON: one file per version to commit and check.",
            discussion: """
                Given a store, prints the model the store carries (Z_MODELCACHE) in the schema-file format: entities with \
                parents, attributes with types, optionality and the concrete defaults SwiftData archived, composites with their \
                elements, relationships with inverses, delete rules and counts, uniqueness constraints. A store without a \
                readable model cache is refused (exit 65). Given a version, or nothing, prints a built-in TimeQuest schema.
                """
        )

        @Argument(help: "A store, or a built-in schema version (default: the newest built-in).", completion: .file())
        var version: String?

        func run() throws {
            try reportingFailures {
                let wanted = version ?? TimeQuestSchemas.newest.versionIdentifier
                let schema: Schema
                if FileKind.of(wanted) == .sqliteStore {
                    schema = Schema(model: try CompiledModel.model(ofStoreAt: URL(fileURLWithPath: wanted)))
                } else if let builtIn = TimeQuestSchemas.declaration(wanted) {
                    schema = builtIn
                } else {
                    throw ValidationError(
                        "\(wanted) is neither a store nor a built-in schema (known: \(TimeQuestSchemas.versions.map(\.versionIdentifier).joined(separator: ", ")))"
                    )
                }
                FileHandle.standardOutput.write(try schema.jsonData())
            }
        }
    }
}
