from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class IntegerStatistics(_message.Message):
    __slots__ = ("minimum", "maximum", "sum")
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    SUM_FIELD_NUMBER: _ClassVar[int]
    minimum: int
    maximum: int
    sum: int
    def __init__(self, minimum: _Optional[int] = ..., maximum: _Optional[int] = ..., sum: _Optional[int] = ...) -> None: ...

class DoubleStatistics(_message.Message):
    __slots__ = ("minimum", "maximum", "sum")
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    SUM_FIELD_NUMBER: _ClassVar[int]
    minimum: float
    maximum: float
    sum: float
    def __init__(self, minimum: _Optional[float] = ..., maximum: _Optional[float] = ..., sum: _Optional[float] = ...) -> None: ...

class StringStatistics(_message.Message):
    __slots__ = ("minimum", "maximum", "sum", "lower_bound", "upper_bound")
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    SUM_FIELD_NUMBER: _ClassVar[int]
    LOWER_BOUND_FIELD_NUMBER: _ClassVar[int]
    UPPER_BOUND_FIELD_NUMBER: _ClassVar[int]
    minimum: bytes
    maximum: bytes
    sum: int
    lower_bound: bytes
    upper_bound: bytes
    def __init__(self, minimum: _Optional[bytes] = ..., maximum: _Optional[bytes] = ..., sum: _Optional[int] = ..., lower_bound: _Optional[bytes] = ..., upper_bound: _Optional[bytes] = ...) -> None: ...

class BucketStatistics(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, count: _Optional[_Iterable[int]] = ...) -> None: ...

class DecimalStatistics(_message.Message):
    __slots__ = ("minimum", "maximum", "sum")
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    SUM_FIELD_NUMBER: _ClassVar[int]
    minimum: bytes
    maximum: bytes
    sum: bytes
    def __init__(self, minimum: _Optional[bytes] = ..., maximum: _Optional[bytes] = ..., sum: _Optional[bytes] = ...) -> None: ...

class DateStatistics(_message.Message):
    __slots__ = ("minimum", "maximum")
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    minimum: int
    maximum: int
    def __init__(self, minimum: _Optional[int] = ..., maximum: _Optional[int] = ...) -> None: ...

class BinaryStatistics(_message.Message):
    __slots__ = ("sum",)
    SUM_FIELD_NUMBER: _ClassVar[int]
    sum: int
    def __init__(self, sum: _Optional[int] = ...) -> None: ...

class TimestampStatistics(_message.Message):
    __slots__ = ("minimum", "maximum", "minimum_utc", "maximum_utc", "minimum_nanos", "maximum_nanos")
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_UTC_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_UTC_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_NANOS_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_NANOS_FIELD_NUMBER: _ClassVar[int]
    minimum: int
    maximum: int
    minimum_utc: int
    maximum_utc: int
    minimum_nanos: int
    maximum_nanos: int
    def __init__(self, minimum: _Optional[int] = ..., maximum: _Optional[int] = ..., minimum_utc: _Optional[int] = ..., maximum_utc: _Optional[int] = ..., minimum_nanos: _Optional[int] = ..., maximum_nanos: _Optional[int] = ...) -> None: ...

class CollectionStatistics(_message.Message):
    __slots__ = ("min_children", "max_children", "total_children")
    MIN_CHILDREN_FIELD_NUMBER: _ClassVar[int]
    MAX_CHILDREN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CHILDREN_FIELD_NUMBER: _ClassVar[int]
    min_children: int
    max_children: int
    total_children: int
    def __init__(self, min_children: _Optional[int] = ..., max_children: _Optional[int] = ..., total_children: _Optional[int] = ...) -> None: ...

class ColumnStatistics(_message.Message):
    __slots__ = ("number_of_values", "int_statistics", "double_statistics", "string_statistics", "bucket_statistics", "decimal_statistics", "date_statistics", "binary_statistics", "timestamp_statistics", "has_null", "bytes_on_disk", "collection_statistics")
    NUMBER_OF_VALUES_FIELD_NUMBER: _ClassVar[int]
    INT_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    STRING_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    BUCKET_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    DECIMAL_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    DATE_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    BINARY_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    HAS_NULL_FIELD_NUMBER: _ClassVar[int]
    BYTES_ON_DISK_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_STATISTICS_FIELD_NUMBER: _ClassVar[int]
    number_of_values: int
    int_statistics: IntegerStatistics
    double_statistics: DoubleStatistics
    string_statistics: StringStatistics
    bucket_statistics: BucketStatistics
    decimal_statistics: DecimalStatistics
    date_statistics: DateStatistics
    binary_statistics: BinaryStatistics
    timestamp_statistics: TimestampStatistics
    has_null: bool
    bytes_on_disk: int
    collection_statistics: CollectionStatistics
    def __init__(self, number_of_values: _Optional[int] = ..., int_statistics: _Optional[_Union[IntegerStatistics, _Mapping]] = ..., double_statistics: _Optional[_Union[DoubleStatistics, _Mapping]] = ..., string_statistics: _Optional[_Union[StringStatistics, _Mapping]] = ..., bucket_statistics: _Optional[_Union[BucketStatistics, _Mapping]] = ..., decimal_statistics: _Optional[_Union[DecimalStatistics, _Mapping]] = ..., date_statistics: _Optional[_Union[DateStatistics, _Mapping]] = ..., binary_statistics: _Optional[_Union[BinaryStatistics, _Mapping]] = ..., timestamp_statistics: _Optional[_Union[TimestampStatistics, _Mapping]] = ..., has_null: _Optional[bool] = ..., bytes_on_disk: _Optional[int] = ..., collection_statistics: _Optional[_Union[CollectionStatistics, _Mapping]] = ...) -> None: ...

class RowIndexEntry(_message.Message):
    __slots__ = ("positions", "statistics")
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    STATISTICS_FIELD_NUMBER: _ClassVar[int]
    positions: _containers.RepeatedScalarFieldContainer[int]
    statistics: ColumnStatistics
    def __init__(self, positions: _Optional[_Iterable[int]] = ..., statistics: _Optional[_Union[ColumnStatistics, _Mapping]] = ...) -> None: ...

class RowIndex(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: _containers.RepeatedCompositeFieldContainer[RowIndexEntry]
    def __init__(self, entry: _Optional[_Iterable[_Union[RowIndexEntry, _Mapping]]] = ...) -> None: ...

class BloomFilter(_message.Message):
    __slots__ = ("num_hash_functions", "bitset", "utf8bitset")
    NUM_HASH_FUNCTIONS_FIELD_NUMBER: _ClassVar[int]
    BITSET_FIELD_NUMBER: _ClassVar[int]
    UTF8BITSET_FIELD_NUMBER: _ClassVar[int]
    num_hash_functions: int
    bitset: _containers.RepeatedScalarFieldContainer[int]
    utf8bitset: bytes
    def __init__(self, num_hash_functions: _Optional[int] = ..., bitset: _Optional[_Iterable[int]] = ..., utf8bitset: _Optional[bytes] = ...) -> None: ...

class BloomFilterIndex(_message.Message):
    __slots__ = ("bloom_filter",)
    BLOOM_FILTER_FIELD_NUMBER: _ClassVar[int]
    bloom_filter: _containers.RepeatedCompositeFieldContainer[BloomFilter]
    def __init__(self, bloom_filter: _Optional[_Iterable[_Union[BloomFilter, _Mapping]]] = ...) -> None: ...

class Stream(_message.Message):
    __slots__ = ("kind", "column", "length")
    KIND_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    kind: int
    column: int
    length: int
    def __init__(self, kind: _Optional[int] = ..., column: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...

class ColumnEncoding(_message.Message):
    __slots__ = ("kind", "dictionary_size", "bloom_encoding")
    KIND_FIELD_NUMBER: _ClassVar[int]
    DICTIONARY_SIZE_FIELD_NUMBER: _ClassVar[int]
    BLOOM_ENCODING_FIELD_NUMBER: _ClassVar[int]
    kind: int
    dictionary_size: int
    bloom_encoding: int
    def __init__(self, kind: _Optional[int] = ..., dictionary_size: _Optional[int] = ..., bloom_encoding: _Optional[int] = ...) -> None: ...

class StripeFooter(_message.Message):
    __slots__ = ("streams", "columns", "writer_timezone", "encryption")
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    WRITER_TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    ENCRYPTION_FIELD_NUMBER: _ClassVar[int]
    streams: _containers.RepeatedCompositeFieldContainer[Stream]
    columns: _containers.RepeatedCompositeFieldContainer[ColumnEncoding]
    writer_timezone: bytes
    encryption: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, streams: _Optional[_Iterable[_Union[Stream, _Mapping]]] = ..., columns: _Optional[_Iterable[_Union[ColumnEncoding, _Mapping]]] = ..., writer_timezone: _Optional[bytes] = ..., encryption: _Optional[_Iterable[bytes]] = ...) -> None: ...

class StringPair(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: bytes
    value: bytes
    def __init__(self, key: _Optional[bytes] = ..., value: _Optional[bytes] = ...) -> None: ...

class Type(_message.Message):
    __slots__ = ("kind", "subtypes", "field_names", "maximum_length", "precision", "scale", "attributes")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUBTYPES_FIELD_NUMBER: _ClassVar[int]
    FIELD_NAMES_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_LENGTH_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    kind: int
    subtypes: _containers.RepeatedScalarFieldContainer[int]
    field_names: _containers.RepeatedScalarFieldContainer[bytes]
    maximum_length: int
    precision: int
    scale: int
    attributes: _containers.RepeatedCompositeFieldContainer[StringPair]
    def __init__(self, kind: _Optional[int] = ..., subtypes: _Optional[_Iterable[int]] = ..., field_names: _Optional[_Iterable[bytes]] = ..., maximum_length: _Optional[int] = ..., precision: _Optional[int] = ..., scale: _Optional[int] = ..., attributes: _Optional[_Iterable[_Union[StringPair, _Mapping]]] = ...) -> None: ...

class StripeInformation(_message.Message):
    __slots__ = ("offset", "index_length", "data_length", "footer_length", "number_of_rows", "encrypt_stripe_id", "encrypted_local_keys")
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    INDEX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    DATA_LENGTH_FIELD_NUMBER: _ClassVar[int]
    FOOTER_LENGTH_FIELD_NUMBER: _ClassVar[int]
    NUMBER_OF_ROWS_FIELD_NUMBER: _ClassVar[int]
    ENCRYPT_STRIPE_ID_FIELD_NUMBER: _ClassVar[int]
    ENCRYPTED_LOCAL_KEYS_FIELD_NUMBER: _ClassVar[int]
    offset: int
    index_length: int
    data_length: int
    footer_length: int
    number_of_rows: int
    encrypt_stripe_id: int
    encrypted_local_keys: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, offset: _Optional[int] = ..., index_length: _Optional[int] = ..., data_length: _Optional[int] = ..., footer_length: _Optional[int] = ..., number_of_rows: _Optional[int] = ..., encrypt_stripe_id: _Optional[int] = ..., encrypted_local_keys: _Optional[_Iterable[bytes]] = ...) -> None: ...

class UserMetadataItem(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: bytes
    value: bytes
    def __init__(self, name: _Optional[bytes] = ..., value: _Optional[bytes] = ...) -> None: ...

class StripeStatistics(_message.Message):
    __slots__ = ("col_stats",)
    COL_STATS_FIELD_NUMBER: _ClassVar[int]
    col_stats: _containers.RepeatedCompositeFieldContainer[ColumnStatistics]
    def __init__(self, col_stats: _Optional[_Iterable[_Union[ColumnStatistics, _Mapping]]] = ...) -> None: ...

class Metadata(_message.Message):
    __slots__ = ("stripe_stats",)
    STRIPE_STATS_FIELD_NUMBER: _ClassVar[int]
    stripe_stats: _containers.RepeatedCompositeFieldContainer[StripeStatistics]
    def __init__(self, stripe_stats: _Optional[_Iterable[_Union[StripeStatistics, _Mapping]]] = ...) -> None: ...

class Footer(_message.Message):
    __slots__ = ("header_length", "content_length", "stripes", "types", "metadata", "number_of_rows", "statistics", "row_index_stride", "writer", "encryption", "calendar", "software_version")
    HEADER_LENGTH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    STRIPES_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NUMBER_OF_ROWS_FIELD_NUMBER: _ClassVar[int]
    STATISTICS_FIELD_NUMBER: _ClassVar[int]
    ROW_INDEX_STRIDE_FIELD_NUMBER: _ClassVar[int]
    WRITER_FIELD_NUMBER: _ClassVar[int]
    ENCRYPTION_FIELD_NUMBER: _ClassVar[int]
    CALENDAR_FIELD_NUMBER: _ClassVar[int]
    SOFTWARE_VERSION_FIELD_NUMBER: _ClassVar[int]
    header_length: int
    content_length: int
    stripes: _containers.RepeatedCompositeFieldContainer[StripeInformation]
    types: _containers.RepeatedCompositeFieldContainer[Type]
    metadata: _containers.RepeatedCompositeFieldContainer[UserMetadataItem]
    number_of_rows: int
    statistics: _containers.RepeatedCompositeFieldContainer[ColumnStatistics]
    row_index_stride: int
    writer: int
    encryption: bytes
    calendar: int
    software_version: bytes
    def __init__(self, header_length: _Optional[int] = ..., content_length: _Optional[int] = ..., stripes: _Optional[_Iterable[_Union[StripeInformation, _Mapping]]] = ..., types: _Optional[_Iterable[_Union[Type, _Mapping]]] = ..., metadata: _Optional[_Iterable[_Union[UserMetadataItem, _Mapping]]] = ..., number_of_rows: _Optional[int] = ..., statistics: _Optional[_Iterable[_Union[ColumnStatistics, _Mapping]]] = ..., row_index_stride: _Optional[int] = ..., writer: _Optional[int] = ..., encryption: _Optional[bytes] = ..., calendar: _Optional[int] = ..., software_version: _Optional[bytes] = ...) -> None: ...

class PostScript(_message.Message):
    __slots__ = ("footer_length", "compression", "compression_block_size", "version", "metadata_length", "writer_version", "stripe_statistics_length", "magic")
    FOOTER_LENGTH_FIELD_NUMBER: _ClassVar[int]
    COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    COMPRESSION_BLOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    METADATA_LENGTH_FIELD_NUMBER: _ClassVar[int]
    WRITER_VERSION_FIELD_NUMBER: _ClassVar[int]
    STRIPE_STATISTICS_LENGTH_FIELD_NUMBER: _ClassVar[int]
    MAGIC_FIELD_NUMBER: _ClassVar[int]
    footer_length: int
    compression: int
    compression_block_size: int
    version: _containers.RepeatedScalarFieldContainer[int]
    metadata_length: int
    writer_version: int
    stripe_statistics_length: int
    magic: bytes
    def __init__(self, footer_length: _Optional[int] = ..., compression: _Optional[int] = ..., compression_block_size: _Optional[int] = ..., version: _Optional[_Iterable[int]] = ..., metadata_length: _Optional[int] = ..., writer_version: _Optional[int] = ..., stripe_statistics_length: _Optional[int] = ..., magic: _Optional[bytes] = ...) -> None: ...
