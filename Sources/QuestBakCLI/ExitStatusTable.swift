import ArgumentParser

extension ExitStatus {
    /// What the status means, in the words of the man page and README.
    var meaning: String {
        switch self {
        case .success: return "success: the command did what was asked"
        case .failure:
            return
                "`diff` found that its two inputs differ (as diff does); for any other command, an unexpected failure that has no status of its own (a bug: please report it)"
        case .repairsNeeded:
            return
                "the archive needs repairs: `import --validate` or `--dry-run` found some, or `import` without `--validate` refused to make them; or `lint` found properties that break CloudKit's rules"
        case .verificationFailed: return "`verify-migration` found a failing check, or nothing to check"
        case .usage: return "usage error: an unknown command or option, a missing or invalid argument"
        case .invalidInput:
            return
                "invalid input: a damaged archive or store, a checksum mismatch, tables that do not match their schema, a file of the wrong kind"
        case .noInput: return "an input (store, archive, schema file, fixtures folder) is missing or cannot be read"
        case .unsupportedVersion:
            return
                "the archive's format or schema version is newer than this questbak reads, or its compression is one this build leaves out (zstd, in the portable build)"
        case .cannotCreateOutput: return "the output exists (without `--force` or `--replace`), or cannot be created there"
        case .ioError: return "reading or writing failed in the operating system: a full disk, a file-size limit, permissions"
        case .busy: return "the store is in use by another process, or kept changing while it was read: close the app and retry"
        }
    }

    /// A command that produces the status (DocumentationTests.testEveryDocumentedExitStatusHasACaseThatProducesIt runs each).
    var example: String {
        switch self {
        case .success: return "`questbak inspect default.store`"
        case .failure: return "`questbak diff default.store other.store` when they differ"
        case .repairsNeeded: return "`questbak import damaged.qbak --validate`"
        case .verificationFailed: return "`questbak verify-migration --fixtures empty-folder`"
        case .usage: return "`questbak expor default.store`"
        case .invalidInput: return "`questbak export backup.qbak -o x.qbak` (an archive is not a store)"
        case .noInput: return "`questbak inspect missing.store`"
        case .unsupportedVersion: return "`questbak import v3.qbak --validate` (an archive of schema 3.0.0)"
        case .cannotCreateOutput: return "`questbak export default.store -o existing.qbak`"
        case .ioError: return "`questbak export default.store -o /full-disk/b.qbak`"
        case .busy: return "`questbak import b.qbak --into default.store --replace` while the app has the store open"
        }
    }

    /// The table for the README.
    static var markdownTable: String {
        (["| status | meaning | for example |", "|---|---|---|"] + allCases.map { "| \($0.rawValue) | \($0.meaning) | \($0.example) |" })
            .joined(separator: "\n")
    }

    /// The man page's EXIT STATUS section body (mdoc).
    static var mdocList: String {
        var lines = [".Bl -tag -width 4n"]
        for status in allCases {
            lines.append(".It \(status.rawValue)")
            lines.append(status.meaning.replacingOccurrences(of: "`", with: "") + ".")
        }
        lines.append(".El")
        return lines.joined(separator: "\n")
    }
}

extension Questbak {
    /// Prints the exit-status table, so the man page and README are made from the one list above
    /// (`make man` puts it in the man page; a test compares the README's copy).
    struct ExitStatuses: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "exit-statuses", abstract: "Print what each exit status means, as a markdown table or mdoc list.")

        @Option(help: "markdown or mdoc.")
        var format = "markdown"

        func run() throws {
            switch format {
            case "markdown": print(ExitStatus.markdownTable)
            case "mdoc": print(ExitStatus.mdocList)
            default: throw ValidationError("--format is markdown or mdoc")
            }
        }
    }
}
