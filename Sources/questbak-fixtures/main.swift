// Regenerates the golden fixture stores: `swift run questbak-fixtures Fixtures`.
import Foundation
import QuestBakKit

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let directory = arguments.first else {
    FileHandle.standardError.write(Data("usage: questbak-fixtures DIRECTORY\n".utf8))
    exit(64)
}
do {
    try FixtureGenerator.writeAll(to: URL(fileURLWithPath: directory, isDirectory: true))
    print("wrote \(FixtureGenerator.all.count) fixture stores to \(directory)")
} catch {
    FileHandle.standardError.write(Data("questbak-fixtures: \(error.localizedDescription)\n".utf8))
    exit(1)
}
