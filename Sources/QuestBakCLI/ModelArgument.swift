import Foundation
import QuestBakKit

/// A model named on the command line, in any of the forms an app team has one: a store (its own
/// model, read from `Z_MODELCACHE`), a schema file (JSON, see `questbak schema`), or a built-in
/// TimeQuest version.
enum ModelArgument {
    static let forms = "a store, a schema file (JSON, see `questbak schema`) or a built-in version"

    static func schema(_ argument: String) throws -> Schema {
        switch FileKind.of(argument) {
        case .sqliteStore:
            return try Schema.model(ofStoreAt: URL(fileURLWithPath: argument))
        case .missing:
            if let builtIn = TimeQuestSchemas.schema(forVersion: argument) { return builtIn }
            throw CommandLineInputError(
                status: .noInput,
                message:
                    "\(argument): no such file, and not a built-in version (\(TimeQuestSchemas.all.map(\.versionIdentifier).joined(separator: ", "))); give \(forms)"
            )
        case .folder:
            throw CommandLineInputError(status: .noInput, message: "\(argument): is a folder; give \(forms)")
        case .unreadable:
            throw CommandLineInputError(status: .noInput, message: "\(argument): cannot be read")
        case .archive:
            throw CommandLineInputError(status: .invalidInput, message: "\(argument): is a questbak archive; give \(forms)")
        default:
            return try Schema.load(from: URL(fileURLWithPath: argument))
        }
    }
}
