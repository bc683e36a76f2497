"""The Chakra execution-trace protobuf schema, built at import time.

Written from the field list of MLCommons Chakra's published
``schema/protobuf/et_def.proto`` (package ``ChakraProtoMsg``, proto3): the
same message names, field numbers and types, so the wire format is the same.
No generated code: the descriptors are assembled with
``google.protobuf.descriptor_pb2`` and turned into classes by the protobuf
runtime.  Left out: ``Tensor`` and the storage messages (``StorageInfo``,
``FsOp``, ``PageOp``, ``BlockOp``, ``Node.storage`` = field 11); a trace that
carries them still parses (protobuf keeps unknown fields) and a
``STORAGE_NODE`` is rejected by the importer.
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "ChakraProtoMsg"

#: NodeType enum values (et_def.proto)
NODE_TYPES = {"INVALID_NODE": 0, "METADATA_NODE": 1, "MEM_LOAD_NODE": 2, "MEM_STORE_NODE": 3, "COMP_NODE": 4,
              "COMM_SEND_NODE": 5, "COMM_RECV_NODE": 6, "COMM_COLL_NODE": 7, "STORAGE_NODE": 8,
              "BATCH_NODE": 9, "CHECKPOINT_NODE": 10}
#: CollectiveCommType enum values (et_def.proto)
COLL_TYPES = {"ALL_REDUCE": 0, "REDUCE": 1, "ALL_GATHER": 2, "GATHER": 3, "SCATTER": 4, "BROADCAST": 5,
              "ALL_TO_ALL": 6, "REDUCE_SCATTER": 7, "REDUCE_SCATTER_BLOCK": 8, "BARRIER": 9}

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = [  # (name stem, protobuf type) of AttributeProto's oneof, fields 3..32 in pairs (scalar, list)
    ("double", _F.TYPE_DOUBLE), ("float", _F.TYPE_FLOAT), ("int32", _F.TYPE_INT32), ("int64", _F.TYPE_INT64),
    ("uint32", _F.TYPE_UINT32), ("uint64", _F.TYPE_UINT64), ("sint32", _F.TYPE_SINT32),
    ("sint64", _F.TYPE_SINT64), ("fixed32", _F.TYPE_FIXED32), ("fixed64", _F.TYPE_FIXED64),
    ("sfixed32", _F.TYPE_SFIXED32), ("sfixed64", _F.TYPE_SFIXED64), ("bool", _F.TYPE_BOOL),
    ("string", _F.TYPE_STRING), ("bytes", _F.TYPE_BYTES)]


def _field(msg, name: str, number: int, ftype: int, *, repeated: bool = False, type_name: str | None = None,
           oneof: int | None = None):
    f = msg.field.add(name=name, number=number, type=ftype,
                      label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        f.type_name = f".{PACKAGE}.{type_name}"
    if oneof is not None:
        f.oneof_index = oneof
    return f


def _list_name(stem: str) -> str:
    return {"uint32": "Uint32List", "uint64": "Uint64List", "sint32": "Sint32List", "sint64": "Sint64List",
            "sfixed32": "Sfixed32List", "sfixed64": "Sfixed64List"}.get(stem, stem.capitalize() + "List")


def _file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="netsim_chakra_et_def.proto", package=PACKAGE, syntax="proto3")
    attr = fd.message_type.add(name="AttributeProto")
    _field(attr, "name", 1, _F.TYPE_STRING)
    _field(attr, "doc_string", 2, _F.TYPE_STRING)
    attr.oneof_decl.add(name="value")
    for k, (stem, ftype) in enumerate(_SCALARS):
        _field(attr, f"{stem}_val", 3 + 2 * k, ftype, oneof=0)
        _field(attr, f"{stem}_list", 4 + 2 * k, _F.TYPE_MESSAGE, type_name=_list_name(stem), oneof=0)
    for stem, ftype in _SCALARS:
        lst = fd.message_type.add(name=_list_name(stem))
        _field(lst, "values", 1, ftype, repeated=True)
    meta = fd.message_type.add(name="GlobalMetadata")
    _field(meta, "version", 1, _F.TYPE_STRING)
    _field(meta, "attr", 2, _F.TYPE_MESSAGE, repeated=True, type_name="AttributeProto")
    for enum_name, values in (("NodeType", NODE_TYPES), ("CollectiveCommType", COLL_TYPES)):
        e = fd.enum_type.add(name=enum_name)
        for n, v in values.items():
            e.value.add(name=n, number=v)
    io = fd.message_type.add(name="IOInfo")
    for i, n in enumerate(("values", "shapes", "types"), start=1):
        _field(io, n, i, _F.TYPE_STRING)
    node = fd.message_type.add(name="Node")
    _field(node, "id", 1, _F.TYPE_UINT64)
    _field(node, "name", 2, _F.TYPE_STRING)
    _field(node, "type", 3, _F.TYPE_ENUM, type_name="NodeType")
    _field(node, "ctrl_deps", 4, _F.TYPE_UINT64, repeated=True)
    _field(node, "data_deps", 5, _F.TYPE_UINT64, repeated=True)
    _field(node, "start_time_micros", 6, _F.TYPE_UINT64)
    _field(node, "duration_micros", 7, _F.TYPE_UINT64)
    _field(node, "inputs", 8, _F.TYPE_MESSAGE, type_name="IOInfo")
    _field(node, "outputs", 9, _F.TYPE_MESSAGE, type_name="IOInfo")
    _field(node, "attr", 10, _F.TYPE_MESSAGE, repeated=True, type_name="AttributeProto")
    return fd


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())


def message_class(name: str):
    """The protobuf message class ``ChakraProtoMsg.<name>``."""
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))


Node = message_class("Node")
GlobalMetadata = message_class("GlobalMetadata")
AttributeProto = message_class("AttributeProto")
