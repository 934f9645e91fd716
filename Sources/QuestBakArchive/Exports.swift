// The archive format is read and written in terms of the store's types (values, models, layouts).
@_exported import CoreDataStore
