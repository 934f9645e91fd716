import CoreDataStore
import Crypto
import Foundation

/// An age X25519 recipient: a public key, written `age1…` (Bech32, human-readable part `age`).
public struct AgeX25519Recipient: Equatable, Sendable {
    /// The X25519 public key.
    public let publicKey: Curve25519.KeyAgreement.PublicKey

    /// A recipient of the given public key.
    public init(publicKey: Curve25519.KeyAgreement.PublicKey) { self.publicKey = publicKey }

    /// Parses `age1…`; nil when `text` is not an X25519 recipient.
    public init?(_ text: String) {
        guard let (hrp, data) = Bech32.decode(text), hrp == "age", text == text.lowercased(), data.count == 32,
            let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: data)
        else { return nil }
        publicKey = key
    }

    /// `age1…`, as age-keygen prints it.
    public var encoded: String { Bech32.encode(hrp: "age", data: Array(publicKey.rawRepresentation)) }

    /// Whether two recipients have the same public key.
    public static func == (left: Self, right: Self) -> Bool { left.publicKey.rawRepresentation == right.publicKey.rawRepresentation }
}

/// An age X25519 identity: a private key, written `AGE-SECRET-KEY-1…` (Bech32, uppercase).
public struct AgeX25519Identity: Sendable {
    /// The X25519 private key.
    public let privateKey: Curve25519.KeyAgreement.PrivateKey

    /// An identity of the given private key.
    public init(privateKey: Curve25519.KeyAgreement.PrivateKey) { self.privateKey = privateKey }

    /// A new identity from the system's random number generator.
    public static func generate() -> AgeX25519Identity { AgeX25519Identity(privateKey: .init()) }

    /// Parses `AGE-SECRET-KEY-1…`; nil when `text` is not an X25519 identity.
    public init?(_ text: String) {
        guard let (hrp, data) = Bech32.decode(text), hrp == "age-secret-key-", data.count == 32,
            let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: data)
        else { return nil }
        privateKey = key
    }

    /// `AGE-SECRET-KEY-1…`, as age-keygen writes it.
    public var encoded: String { Bech32.encode(hrp: "age-secret-key-", data: Array(privateKey.rawRepresentation)).uppercased() }

    /// The recipient whose archives this identity opens.
    public var recipient: AgeX25519Recipient { AgeX25519Recipient(publicKey: privateKey.publicKey) }

    /// The identity file as age-keygen writes it: when it was made, the public key, the secret key.
    public func identityFileText(created: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return "# created: \(formatter.string(from: created))\n# public key: \(recipient.encoded)\n\(encoded)\n"
    }
}

/// Who an encrypted file is for: each recipient can open it on its own.
public enum AgeRecipient: Sendable {
    /// A public key (`age1…`).
    case x25519(AgeX25519Recipient)
    /// A passphrase (the scrypt recipient), with the work factor to derive its key with (log2 N).
    /// It must be the only recipient of a file.
    case passphrase(Data, workFactor: Int = AgeFormat.defaultScryptWorkFactor)
}

/// What can open an encrypted file.
public enum AgeIdentity: Sendable {
    /// A private key (`AGE-SECRET-KEY-1…`).
    case x25519(AgeX25519Identity)
    /// A passphrase, and the largest scrypt work factor (log2 N) to spend on it: a file that asks
    /// for more is refused before any work is done.
    case passphrase(Data, maximumWorkFactor: Int = AgeFormat.maximumScryptWorkFactor)
}

/// Reading the key files the age tools read and write.
public enum AgeKeyFile {
    /// Key files are small; anything larger is not one (and must not be read whole).
    static let sizeLimit = 1 << 20

    /// The identities of an identity file as age-keygen writes it: `#` comments and blank lines
    /// ignored, one `AGE-SECRET-KEY-1…` per other line, at least one.
    public static func identities(at url: URL) throws -> [AgeX25519Identity] {
        var identities: [AgeX25519Identity] = []
        for (number, line) in try lines(of: url) where !isComment(line) {
            guard let identity = AgeX25519Identity(line) else {
                throw AgeError.invalidKey(
                    path: url.path, line: number, reason: describe(line, expected: "an age identity (AGE-SECRET-KEY-1…)"))
            }
            identities.append(identity)
        }
        guard !identities.isEmpty else { throw AgeError.noKeys(path: url.path, kind: "age identity (AGE-SECRET-KEY-1…)") }
        return identities
    }

    /// The recipients of a recipients file: `#` comments and blank lines ignored, one `age1…` per
    /// other line, at least one.
    public static func recipients(at url: URL) throws -> [AgeX25519Recipient] {
        var recipients: [AgeX25519Recipient] = []
        for (number, line) in try lines(of: url) where !isComment(line) {
            guard let recipient = AgeX25519Recipient(line) else {
                throw AgeError.invalidKey(path: url.path, line: number, reason: describe(line, expected: "an age recipient (age1…)"))
            }
            recipients.append(recipient)
        }
        guard !recipients.isEmpty else { throw AgeError.noKeys(path: url.path, kind: "age recipient (age1…)") }
        return recipients
    }

    /// A passphrase file's passphrase: its first line, without the line feed (or CR LF) that ends
    /// it. An empty passphrase is refused: it would protect nothing.
    public static func passphrase(at url: URL) throws -> Data {
        let data = try contents(of: url)
        var line = data.prefix { $0 != UInt8(ascii: "\n") }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard !line.isEmpty else { throw AgeError.noKeys(path: url.path, kind: "passphrase (its first line is empty)") }
        return Data(line)
    }

    private static func isComment(_ line: String) -> Bool { line.isEmpty || line.hasPrefix("#") }

    /// Names what a line looks like without printing it: it may be someone's secret key.
    private static func describe(_ line: String, expected: String) -> String {
        let kind: String
        if let (hrp, _) = Bech32.decode(line), hrp.hasPrefix("age1") || hrp.hasPrefix("age-plugin-") {
            kind = "an age plugin key, which questbak does not support"
        } else if line.hasPrefix("ssh-") || line.hasPrefix("-----BEGIN") {
            kind = "an SSH key, which questbak does not support"
        } else if line.uppercased().hasPrefix("AGE-SECRET-KEY-") || line.lowercased().hasPrefix("age1") {
            kind = "a damaged key (its checksum or length is wrong)"
        } else {
            kind = "something else"
        }
        return "expected \(expected), found \(kind)"
    }

    private static func contents(of url: URL) throws -> Data {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw AgeError.keyFileUnreadable(path: url.path, reason: String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        defer { try? handle.close() }
        do {
            let data = try handle.read(upToCount: sizeLimit + 1) ?? Data()
            guard data.count <= sizeLimit else {
                throw AgeError.keyFileUnreadable(path: url.path, reason: "larger than \(sizeLimit / 1024) KiB, which no key file is")
            }
            return data
        } catch let error as AgeError {
            throw error
        } catch {
            throw AgeError.keyFileUnreadable(path: url.path, reason: error.localizedDescription)
        }
    }

    /// The lines of a text key file, numbered from 1, a CR before each line feed dropped.
    private static func lines(of url: URL) throws -> [(Int, String)] {
        let data = try contents(of: url)
        guard String(data: data, encoding: .utf8) != nil else {
            throw AgeError.keyFileUnreadable(path: url.path, reason: "not UTF-8 text")
        }
        // Split bytes, not Characters: Swift reads CR LF as one Character, which is no line feed.
        return data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated().map { index, line in
            (index + 1, String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self))
        }
    }
}
