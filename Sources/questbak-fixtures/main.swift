// Generates stores: `swift run questbak-fixtures Fixtures` regenerates the golden fixtures
// (TimeQuest's, and the stores of other apps in Fixtures/AnyApp);
// `swift run questbak-fixtures --bulk N [--v1] [--seed S] STORE` writes a large store of N estimations.
import Foundation
import QuestBakFixtures
import QuestBakKit

var arguments = Array(CommandLine.arguments.dropFirst())
let usage = "usage: questbak-fixtures DIRECTORY | --bulk N [--v1] [--seed S] STORE"
func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("questbak-fixtures: \(message)\n".utf8))
    exit(status)
}
if arguments.contains("-h") || arguments.contains("--help") {
    print(usage)
    exit(0)
}
do {
    if arguments.first == "--bulk" {
        let v1 = arguments.contains("--v1")
        arguments.removeAll { $0 == "--v1" }
        // Another seed gives the same records (natural keys) under other cloudIDs and values: a
        // second device's copy, for the merge benchmark.
        var seed: UInt64 = 1
        if let index = arguments.firstIndex(of: "--seed") {
            guard index + 1 < arguments.count, let value = UInt64(arguments[index + 1]) else {
                fail("--seed needs a number", status: 64)
            }
            seed = value
            arguments.removeSubrange(index...(index + 1))
        }
        guard arguments.count == 3, let count = Int(arguments[1]) else {
            fail("usage: questbak-fixtures --bulk N [--v1] [--seed S] STORE", status: 64)
        }
        try BulkStore.write(
            to: URL(fileURLWithPath: arguments[2]), schema: v1 ? TimeQuestSchemas.v1 : TimeQuestSchemas.v2, estimations: count,
            seed: seed)
        print("wrote \(arguments[2]) with \(count) estimations")
    } else {
        // An option it does not know is not a folder name: `--hlep` must not become a folder.
        guard arguments.count == 1, !arguments[0].hasPrefix("-") else { fail(usage, status: 64) }
        try FixtureGenerator.writeAll(to: URL(fileURLWithPath: arguments[0], isDirectory: true))
        print("wrote \(FixtureGenerator.all.count) fixture stores to \(arguments[0])")
        try AnyAppFixtures.writeAll(to: URL(fileURLWithPath: arguments[0], isDirectory: true))
        try GateFixtures.writeAll(to: URL(fileURLWithPath: arguments[0], isDirectory: true))
        print("wrote \(AnyAppFixtures.all.count) fixture stores to \(arguments[0])/\(AnyAppFixtures.folderName)")
    }
} catch {
    fail(error.localizedDescription, status: 1)
}
