import ArgumentParser
import Foundation
import QuestBakKit

/// The keys of every command that reads an archive (import, import --merge, verify, inspect,
/// diff): an age-encrypted archive is decrypted with them as it is read, never to disk. A plain
/// archive is read as it is, keys or not.
struct ArchiveKeyOptions: ParsableArguments {
    @Option(
        name: .customLong("identity"),
        help: ArgumentHelp(
            "An age identity file (as age-keygen or questbak keygen writes it) to decrypt an encrypted archive with (repeatable).",
            valueName: "FILE"),
        completion: .file())
    var identityFiles: [String] = []

    @Option(
        name: .customLong("passphrase-file"),
        help: ArgumentHelp(
            "A file whose first line is the passphrase an encrypted archive was made with.", valueName: "FILE"),
        completion: .file())
    var passphraseFile: String?

    func validate() throws {
        if passphraseFile != nil && !identityFiles.isEmpty {
            throw ValidationError("give --identity or --passphrase-file, not both: an archive is encrypted one way or the other")
        }
    }

    var isEmpty: Bool { identityFiles.isEmpty && passphraseFile == nil }

    func keys() throws -> ArchiveKeys {
        if let passphraseFile {
            return ArchiveKeys(identities: [.passphrase(try AgeKeyFile.passphrase(at: URL(fileURLWithPath: passphraseFile)))])
        }
        return ArchiveKeys(
            identities: try identityFiles.flatMap { try AgeKeyFile.identities(at: URL(fileURLWithPath: $0)) }.map { .x25519($0) })
    }
}

/// Export's keys: whom the archive is encrypted to.
struct RecipientOptions: ParsableArguments {
    @Option(
        name: .customLong("recipient"),
        help: ArgumentHelp(
            "Encrypt the archive (age format) to this public key, which starts with age1 (repeatable).", valueName: "RECIPIENT"))
    var recipients: [String] = []

    @Option(
        name: .customLong("recipients-file"),
        help: ArgumentHelp("Encrypt to every age1 public key in this file, one a line (repeatable).", valueName: "FILE"),
        completion: .file())
    var recipientsFiles: [String] = []

    @Option(
        name: .customLong("passphrase-file"),
        help: ArgumentHelp(
            "Encrypt with the passphrase on the first line of this file (age's scrypt recipient; not with --recipient).",
            valueName: "FILE"),
        completion: .file())
    var passphraseFile: String?

    func validate() throws {
        if passphraseFile != nil && !(recipients.isEmpty && recipientsFiles.isEmpty) {
            throw ValidationError(
                "--passphrase-file cannot be combined with --recipient or --recipients-file: a passphrase must be an age file's only recipient"
            )
        }
        for text in recipients where AgeX25519Recipient(text) == nil {
            throw ValidationError("--recipient must be an age public key (age1 and 58 more characters), found \"\(text.prefix(80))\"")
        }
    }

    func recipientList() throws -> [AgeRecipient] {
        if let passphraseFile {
            return [.passphrase(try AgeKeyFile.passphrase(at: URL(fileURLWithPath: passphraseFile)))]
        }
        let given = recipients.compactMap { AgeX25519Recipient($0) }
        let listed = try recipientsFiles.flatMap { try AgeKeyFile.recipients(at: URL(fileURLWithPath: $0)) }
        return (given + listed).map { .x25519($0) }
    }
}
