import ArgumentParser
import Foundation
import QuestBakKit

/// A model named on the command line, in any of the forms an app team has one: a store (its own
/// model, read from `Z_MODELCACHE`), a schema file (JSON, see `questbak schema`), or a built-in
/// TimeQuest version.
enum ModelArgument {
    static let forms = "a store, a schema file (JSON, see `questbak schema`) or a built-in version"

    /// The model as a version of it: a store's own compiled model as it is, a schema file's or a
    /// built-in version's with what no model holds (typed arrays, `[]` defaults, identities).
    static func modelVersion(_ argument: String) throws -> ModelVersion {
        switch FileKind.of(argument) {
        case .sqliteStore:
            return ModelVersion(compiled: try CompiledModel.model(ofStoreAt: URL(fileURLWithPath: argument)))
        case .missing:
            if let builtIn = TimeQuestSchemas.version(argument) { return builtIn }
            throw CommandLineInputError(
                status: .noInput,
                message:
                    "\(argument): no such file, and not a built-in version (\(TimeQuestSchemas.versions.map(\.versionIdentifier).joined(separator: ", "))); give \(forms)"
            )
        case .folder:
            throw CommandLineInputError(status: .noInput, message: "\(argument): is a folder; give \(forms)")
        case .unreadable:
            throw CommandLineInputError(status: .noInput, message: "\(argument): cannot be read")
        case .archive:
            throw CommandLineInputError(status: .invalidInput, message: "\(argument): is a questbak archive; give \(forms)")
        default:
            return ModelVersion(schema: try Schema.load(from: URL(fileURLWithPath: argument)))
        }
    }
}

/// `--to NEW_MODEL_STORE` names a store; a version there (`migrate S --to 2.0.0`) is the most
/// likely slip, since `--to-version` is the option for versions.
enum ModelStoreArgument {
    static func check(_ path: String?) throws {
        guard let path, FileKind.of(path) == .missing, looksLikeVersion(path) else { return }
        throw ValidationError(
            "--to takes a store made by the app's new build, and there is no file \(path); to go to schema version \(path), use --to-version \(path)"
        )
    }

    /// Digits and dots, as a version identifier is written ("2", "2.0.0").
    static func looksLikeVersion(_ text: String) -> Bool {
        !text.isEmpty && text.first?.isNumber == true && text.allSatisfy { $0.isNumber || $0 == "." }
    }
}
