import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new age identity (X25519 key pair) for encrypting archives.",
            discussion: """
                The file is what age-keygen writes: a comment with its creation time, a comment with its public key \
                (the recipient, which starts with age1), and the secret key (which starts with AGE-SECRET-KEY-1). It is created with mode 0600 and never \
                overwritten (exit 73 when FILE exists). The recipient is also printed on standard error; share it with \
                whoever encrypts backups for you, and keep the file itself secret and backed up elsewhere: without it, \
                archives encrypted to its recipient cannot be opened. age -d -i FILE decrypts them too.

                Example: `questbak keygen -o key.txt`.
                """
        )

        @Option(name: .shortAndLong, help: "The identity file to create.", completion: .file())
        var output: String

        func run() throws {
            try reportingFailures {
                let identity = AgeX25519Identity.generate()
                let file = try AtomicOutputFile(destination: URL(fileURLWithPath: output), overwrite: false)
                // A secret key: readable by its owner only, from the moment it has a name.
                guard fchmod(file.fileDescriptor, 0o600) == 0 else {
                    throw OutputError.cannotCreate(path: output, reason: "chmod 0600: " + String(cString: strerror(errno)))
                }
                let text = Data(identity.identityFileText(created: Date()).utf8)
                let written = text.withUnsafeBytes { write(file.fileDescriptor, $0.baseAddress, $0.count) }
                guard written == text.count else {
                    throw OutputError.io(path: output, reason: written < 0 ? String(cString: strerror(errno)) : "short write")
                }
                try file.commit()
                FileHandle.standardError.write(Data("Public key: \(identity.recipient.encoded)\n".utf8))
            }
        }
    }
}
