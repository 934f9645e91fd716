// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "questbak",
    // SwiftData's floor: an app that embeds QuestBakKit runs on these.
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "QuestBakKit", targets: ["QuestBakKit"]),
        .executable(name: "questbak", targets: ["questbak"]),
    ],
    // SystemArchive links libarchive and libzstd (pkg-config system libraries). Without it
    // (`--disable-default-traits`, the portable build an iOS app gets), neither is linked: tar is
    // questbak's own, gzip goes through zlib, and zstd archives are refused by name.
    traits: [
        .trait(name: "SystemArchive", description: "Link libarchive (reading) and libzstd (zstd archives)."),
        .default(enabledTraits: ["SystemArchive"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // `make docs`: the DocC catalog built with warnings as errors.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // libarchive: the default build's tar reader, and the reference writer of TarFormatTests.
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
        ),
        // zlib: raw DEFLATE for the store's compiled model cache (Z_MODELCACHE), and gzip archives.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // zstd itself: archive frames with content checksums (libarchive's zstd filter sets none).
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // SQLite's variadic configuration calls, wrapped for Swift (triggers off during a restore).
        .systemLibrary(name: "CSQLiteConfig", path: "Sources/CSQLiteConfig"),
        // glibc functions Swift's Glibc module does not import (malloc's settings, copy_file_range).
        .systemLibrary(name: "CLibcExtras", path: "Sources/CLibcExtras"),
        // The library, in three modules whose dependencies point one way, so that a wrong-way
        // import cannot be written: CoreDataStore ← QuestBakArchive ← QuestBakKit. None reads a
        // flag or the environment or installs a signal handler: an app can embed them.
        //
        // Any Core Data SQLite store: values, plists, the model, its layout on tables, store I/O.
        // No archive format, no command line.
        .target(
            name: "CoreDataStore",
            dependencies: [
                "CZlib", "CLibcExtras",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for reading and binding TEXT with exact byte lengths (StoredValue).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The archive format: manifest, member encodings, tar and compression, age encryption.
        .target(
            name: "QuestBakArchive",
            dependencies: [
                "CoreDataStore",
                .target(name: "CArchive", condition: .when(traits: ["SystemArchive"])),
                "CZlib",
                .target(name: "CZstd", condition: .when(traits: ["SystemArchive"])),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                // scrypt, for age's passphrase recipient (Age/).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The engine (export, restore, repair, merge, migrate, diff, verify) and its public API.
        .target(
            name: "QuestBakKit",
            dependencies: [
                "CoreDataStore",
                "QuestBakArchive",
                "CSQLiteConfig",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The command line: subcommands, rendering, hints, exit statuses, process hooks.
        .target(
            name: "QuestBakCLI",
            dependencies: [
                "QuestBakKit", "CLibcExtras", "CSQLiteConfig", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(name: "questbak", dependencies: ["QuestBakCLI"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // Test tooling: fixture and bulk-store generators, the fuzzer. Only tools and tests use it.
        .target(
            name: "QuestBakFixtures",
            dependencies: [
                "QuestBakKit", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(name: "questbak-fixtures", dependencies: ["QuestBakFixtures"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // Examples/RescueBeforeReset: an app's new build that cannot open its store rescues it,
        // resets and merges (`make test` runs it). QuestBakFixtures stands in for SwiftData there.
        .executableTarget(
            name: "RescueBeforeReset", dependencies: ["QuestBakKit", "QuestBakFixtures"], path: "Examples/RescueBeforeReset",
            swiftSettings: [.swiftLanguageMode(.v6)]),
        // The archive reader's fuzz campaign: `swift run -c release questbak-fuzz --iterations 10000`.
        .executableTarget(name: "questbak-fuzz", dependencies: ["QuestBakFixtures"], swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(
            name: "QuestBakTestSupport",
            dependencies: [
                "QuestBakKit", "QuestBakFixtures", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The library as an app uses it: a plain import, public symbols only (no package access),
        // built and run by `make test`.
        .executableTarget(
            name: "questbak-example", dependencies: ["QuestBakKit"], path: "Examples/BackupApp", packageAccess: false,
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Tests of the public API, which see only what an app sees (no @testable, no package access).
        .testTarget(
            name: "QuestBakAPITests", dependencies: ["QuestBakKit"], packageAccess: false,
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "QuestBakKitTests",
            dependencies: [
                "CoreDataStore", "QuestBakArchive", "QuestBakKit", "QuestBakFixtures", "QuestBakTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "questbakTests",
            dependencies: [
                "questbak", "QuestBakCLI", "QuestBakFixtures", "questbak-fixtures", "QuestBakTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
