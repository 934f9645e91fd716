import Crypto
import Foundation
import QuestBakKit
import QuestBakTestSupport
import XCTest

/// The age test vectors (C2SP/CCTV's testkit, Tests/Corpus/age-testkit with its README): each
/// file decrypts, or fails at the stage it names, and no plaintext is released but what the
/// vector allows.
final class AgeTestkitTests: XCTestCase {
    enum Outcome: String {
        case success
        case headerFailure = "header failure"
        case hmacFailure = "HMAC failure"
        case noMatch = "no match"
        case payloadFailure = "payload failure"
    }

    func testEveryVectorDecryptsOrFailsAsItExpects() throws {
        let folder = Repository.root.appendingPathComponent("Tests/Corpus/age-testkit")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "README.md" }.sorted()
        XCTAssertGreaterThan(names.count, 60)
        let directory = try TemporaryTestDirectory()
        for name in names {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
            let separator = try XCTUnwrap(bytes.range(of: Data("\n\n".utf8)), name)
            var fields: [(String, String)] = []
            for line in String(decoding: bytes[..<separator.lowerBound], as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                fields.append((parts[0], parts.count > 1 ? parts[1] : ""))
            }
            let expect = try XCTUnwrap(Outcome(rawValue: fields.first { $0.0 == "expect" }?.1 ?? ""), "\(name): expect")
            let payloadHash = fields.first { $0.0 == "payload" }?.1
            var identities: [AgeIdentity] = []
            for (key, value) in fields {
                if key == "identity" { identities.append(.x25519(try XCTUnwrap(AgeX25519Identity(value), "\(name): identity"))) }
                if key == "passphrase" { identities.append(.passphrase(Data(value.utf8))) }
            }
            let file = directory.path(name)
            try bytes[separator.upperBound...].write(to: file)

            var released = Data()
            var outcome = Outcome.success
            var failure: Error?
            do {
                let reader = try AgeDecryptingReader(contentsOf: file, identities: identities)
                do {
                    while let chunk = try reader.nextChunk() { released += chunk }
                } catch {
                    failure = error
                    outcome = .payloadFailure
                }
            } catch let error as AgeError {
                failure = error
                switch error {
                case .headerAuthenticationFailed: outcome = .hmacFailure
                case .noMatchingIdentity, .wrongPassphrase, .identityRequired, .passphraseRequired: outcome = .noMatch
                default: outcome = .headerFailure
                }
            }
            XCTAssertEqual(outcome, expect, "\(name): \(failure.map { "\($0)" } ?? "decrypted")")
            if let payloadHash {
                let hash = SHA256.hash(data: released).map { String(format: "%02x", $0) }.joined()
                XCTAssertEqual(hash, payloadHash, "\(name): the plaintext released before the outcome")
            }
            if let failure { XCTAssertFalse((failure as? LocalizedError)?.errorDescription?.isEmpty ?? true, name) }
        }
    }
}
