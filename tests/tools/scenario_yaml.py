"""Reads a YAML file the way rxerun's loader does, for the schema tests:
YAML 1.2's core schema for plain scalars (`off` and `yes` are text, `7.3`
a number, `010` ten), merge keys (`<<: *common`, explicit keys win, an
earlier mapping of a list wins), every key as text, and refused: repeated
keys, keys that are not scalars, more than one document, and a document of
more than 200000 nodes counting each use of an alias (an alias bomb would
otherwise expand in the validator). What PyYAML cannot read raises
yaml.YAMLError."""
import re

import yaml

MAX_NODES = 200000

INT = re.compile(r"^[-+]?[0-9]{1,20}$")
FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


class Loader(yaml.SafeLoader):
    pass


Loader.yaml_implicit_resolvers = {}
Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(true|True|TRUE|false|False|FALSE)$"),
                             list("tTfF"))
Loader.add_implicit_resolver("tag:yaml.org,2002:int", INT, list("-+0123456789"))
Loader.add_implicit_resolver("tag:yaml.org,2002:float", FLOAT, list("-+.0123456789"))
Loader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(~|null|Null|NULL|)$"), ["~", "n", "N", ""])
Loader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^<<$"), ["<"])
Loader.add_constructor("tag:yaml.org,2002:int", lambda loader, node: int(loader.construct_scalar(node)))
Loader.add_constructor("tag:yaml.org,2002:float", lambda loader, node: float(loader.construct_scalar(node)))


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key, _ in node.value:
        if key.tag == "tag:yaml.org,2002:merge":
            continue
        if not isinstance(key, yaml.ScalarNode):
            raise yaml.constructor.ConstructorError(None, None, "a mapping key must be a plain string", key.start_mark)
        if key.value in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key.value!r}", key.start_mark)
        seen.add(key.value)
    loader.flatten_mapping(node)
    mapping = {}
    for key, value in node.value:  # merged pairs first: the explicit ones, later, win
        mapping[key.value] = loader.construct_object(value, deep=deep)
    return mapping


Loader.construct_mapping = _construct_mapping
Loader.add_constructor("tag:yaml.org,2002:map", lambda loader, node: _construct_mapping(loader, node, deep=True))


def _count(node, budget):
    budget[0] -= 1
    if budget[0] < 0:
        raise yaml.YAMLError(f"the document is too large: more than {MAX_NODES} YAML nodes")
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _count(item, budget)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _count(key, budget)
            _count(value, budget)


def load(path):
    with open(path, "rb") as f:
        loader = Loader(f.read())
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _count(node, [MAX_NODES])
        return loader.construct_document(node)
    finally:
        loader.dispose()
