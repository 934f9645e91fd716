import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Locate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the SwiftData and Core Data stores in the simulator's app containers or any folder.",
            discussion: """
                Looks below the iOS simulator's devices (~/Library/Developer/CoreSimulator/Devices), where each app's data \
                container and each App Group container holds a .com.apple.mobile_container_manager.metadata.plist naming its \
                bundle or group identifier, or below the folders given with --in (a tree copied from a Mac reads the same on \
                Linux). Each store is read through a private copy, so the store, its -wal and its -shm are left as they were. \
                Prints each store's path, container, model version identifier, model hash (the first 12 hex digits of the \
                checksum of its entity version hashes: stores of one physical model share it), size and WAL state. Symbolic \
                links are not followed. Exits 66 when no store is found.
                """
        )

        @Option(name: .customLong("bundle-id"), help: "Only stores in the container of this app or App Group identifier.")
        var bundleID: String?

        @Option(
            name: .customLong("in"), help: "A folder to search instead of the simulator's devices (repeatable).", completion: .directory)
        var folders: [String] = []

        @Flag(help: "Print the stores as JSON.")
        var json = false

        /// The simulator's devices folder in the user's home: where `xcrun simctl` keeps them.
        static var simulatorDevices: URL {
            // $HOME first, as the shell's ~ is (a CI job or a test may point it elsewhere).
            let home = ProcessInfo.processInfo.environment["HOME"].map { URL(fileURLWithPath: $0) }
            return (home ?? FileManager.default.homeDirectoryForCurrentUser).appendingPathComponent(
                "Library/Developer/CoreSimulator/Devices")
        }

        func run() throws {
            try reportingFailures(json: json) {
                let roots = folders.isEmpty ? [Self.simulatorDevices] : folders.map { URL(fileURLWithPath: $0) }
                for root in roots where !FileManager.default.fileExists(atPath: root.path) {
                    let hint = folders.isEmpty ? " (no iOS simulator here: give --in DIR)" : ""
                    throw CommandLineInputError(status: .noInput, message: "\(root.path): no such folder\(hint)")
                }
                let found = try StoreLocator.locate(below: roots, bundleIdentifier: bundleID)
                if json {
                    print(try JSONOutput.render(found))
                } else {
                    for store in found.stores { print(Self.text(store)) }
                }
                for file in found.unreadable where !json { standardError("questbak: warning: \(file.path): \(file.reason)") }
                if found.stores.isEmpty {
                    let which = bundleID.map { " in the container of \($0)" } ?? ""
                    throw CommandLineInputError(
                        status: .noInput,
                        message: "no SwiftData or Core Data store\(which) below \(roots.map(\.path).joined(separator: ", "))")
                }
            }
        }

        static func text(_ store: StoreLocator.FoundStore) -> String {
            let container = store.bundleIdentifier.map { "\(store.container ?? "app") \($0)" } ?? "no container"
            let version =
                store.versionIdentifiers.isEmpty ? "no version identifier" : "version " + store.versionIdentifiers.joined(separator: ", ")
            let wal =
                store.walFrames > 0
                ? "WAL: \(store.walFrames) frames not yet in the main file (copy all three files, or use questbak export)"
                : store.hasWAL ? "WAL: empty" : "no WAL"
            return store.path
                + "\n  \(container); \(version), model \(store.modelHash), \(store.entities) entities; \(store.bytes) bytes; \(wal)"
        }
    }
}
