import Foundation

/// The one error the public API throws: what kind of failure it is, a sentence that says it, and
/// the library's own error underneath.
///
/// An app switches on ``category`` to decide what to do (ask the user to close the app and retry,
/// say the backup is damaged, offer to pick another file); ``message`` is the sentence to show or
/// log, naming the file, entity, record and field concerned; ``underlying`` is the typed error of
/// the layer that failed, for a log or a bug report.
///
/// ```swift
/// do {
///     try await QuestBak.backUp(store: storeURL, to: archiveURL)
/// } catch let error where error.category == .busy {
///     // The store kept changing while it was read: try again when the app is idle.
/// }
/// ```
///
/// What is not a failure is a result, not an error: repairs a restore made, a migration gate's
/// failing checks, the differences `diff` finds.
public struct QuestBakError: Error, LocalizedError, CustomStringConvertible {
    /// What kind of failure an error is; every library error falls in exactly one.
    public enum Category: String, Sendable, CaseIterable, Equatable {
        /// The store is in use by another process, or kept changing while it was read: retry when
        /// the app that writes it is idle or closed.
        case busy
        /// The input is damaged or is not what it claims: a corrupt archive, a checksum mismatch, a
        /// store whose tables do not match its model, a file of the wrong kind, records a new model
        /// refuses.
        case invalidInput
        /// The input's format, schema or model version is newer than this library reads.
        case unsupportedVersion
        /// An input (store, archive, key, fixtures folder) does not exist or cannot be read.
        case missingInput
        /// The output exists and was not to be replaced, or cannot be created where it was asked.
        case outputExists
        /// Reading or writing failed in the operating system: a full disk, a file-size limit,
        /// permissions.
        case io
        /// The task was cancelled; whatever the operation had begun to write was removed.
        case cancelled
        /// The request itself cannot be met whatever the input: an unknown target version, a
        /// property that is not a date, invalid age recipients.
        case usage
        /// A failure with no category of its own: a bug in the library, to be reported.
        case unexpected
    }

    /// What kind of failure this is.
    public var category: Category
    /// One sentence that says what failed and where (the file, entity, record, field).
    public var message: String
    /// The error of the layer that failed, for a log or a bug report: a public one of the store
    /// or archive layer (`StoreError`, `ArchiveError`, `AgeError`, `OutputError`), one of the
    /// engine's own (whose type is not public: switch on ``category`` instead), or
    /// `CancellationError`.
    public var underlying: any Error

    /// An error of the given category.
    public init(_ category: Category, message: String, underlying: any Error) {
        self.category = category
        self.message = message
        self.underlying = underlying
    }

    /// Any error as a `QuestBakError`: a `QuestBakError` as it is, a library error in the
    /// category its case belongs to, anything else `.unexpected`.
    public init(_ error: any Error) {
        if let error = error as? QuestBakError {
            self = error
            return
        }
        self.init(
            Self.category(of: error), message: (error as? LocalizedError)?.errorDescription ?? "\(error)", underlying: error)
    }

    /// ``message``, for `LocalizedError`.
    public var errorDescription: String? { message }
    /// ``message``.
    public var description: String { message }

    /// The one table from the library's typed errors to categories (the command line's exit
    /// statuses are a lookup from these).
    static func category(of error: any Error) -> Category {
        switch error {
        case is CancellationError:
            return .cancelled
        case let error as CocoaError where [.fileNoSuchFile, .fileReadNoSuchFile].contains(error.code):
            // Foundation's own reading of a folder (a gate's fixtures) that is not there.
            return .missingInput
        case let error as StoreError:
            switch error {
            case .notFound, .unreadable: return .missingInput
            case .sqlite(_, let code, _):
                // SQLITE_NOTADB (26) and SQLITE_CORRUPT (11) are bad input; SQLITE_BUSY (5) and
                // SQLITE_LOCKED (6) a store in use; PERM, READONLY, IOERR, FULL and CANTOPEN
                // (3, 8, 10, 13, 14) the file system's refusal; anything else unexpected.
                switch code {
                case 11, 26: return .invalidInput
                case 5, 6: return .busy
                case 3, 8, 10, 13, 14: return .io
                default: return .unexpected
                }
            case .notACoreDataStore, .notAStore, .noModel, .unreadableMetadata, .schemaMismatch, .undecodableValue, .recordTooLarge,
                .unknownVersion:
                return .invalidInput
            case .unsupportedVersion: return .unsupportedVersion
            case .sourceKeptChanging: return .busy
            case .io: return .io
            }
        case let error as ArchiveError:
            switch error {
            case .unsupportedFormatVersion, .unsupportedSchemaVersion, .codecUnavailable: return .unsupportedVersion
            case .write: return .io
            default: return .invalidInput
            }
        case let error as ImportError:
            switch error {
            // Not an error of the public API, whose restore makes repairs; the command line
            // gives it a status of its own before it asks for a category.
            case .repairsNeeded: return .invalidInput
            case .unknownTargetVersion, .notADateProperty: return .usage
            case .storeChangedDuringMerge: return .busy
            case .verificationFailed: return .io
            case .notImportable, .downgrade, .template, .notMergeable: return .invalidInput
            }
        case let error as AgeError:
            switch error {
            case .keyFileUnreadable, .unreadable: return .missingInput
            case .write: return .io
            case .invalidRecipients: return .usage
            default: return .invalidInput
            }
        case let error as FixtureSet.Failure:
            switch error {
            case .sameModel, .nameTaken: return .outputExists
            case .invalidName, .chainOutsideSet, .chainIsAFixture: return .usage
            case .unreadableManifest: return .invalidInput
            }
        case let error as RedactionError:
            switch error {
            case .unknownProperty: return .usage
            case .emptyKey: return .invalidInput
            case .collision: return .unexpected
            }
        case is RepairError, is MigrationError, is SchemaFileError, is DiffError:
            return .invalidInput
        case let error as OutputError:
            switch error {
            case .exists, .cannotCreate: return .outputExists
            case .io: return .io
            }
        default:
            return .unexpected
        }
    }
}
