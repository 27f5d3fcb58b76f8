#!/usr/bin/python3
"""Applies a recipe's source filter to a .jsonl shard the way docs/recipe.md
("Filters") says, written apart from the library (Python's json module and
its exact int/float comparisons), so the unit tests can compare ordo's
counts with it:

    filter_reference.py FILTER.json SHARD.jsonl TEXT_FIELD

prints {"read", "passed", "filtered", "empty", "kept": [record numbers]}
or, on a field that cannot be compared, {"error": "field '...' ..."} and
exits 1.
"""
import json
import sys

MISSING = object()
OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "exists")


class TypeMismatch(Exception):
    pass


def lookup(record, path):
    value = record
    for part in path.split("."):  # dots always separate
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def kind(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object or array"


def predicate(cond, record, text_bytes):
    field = cond["field"]
    (op,) = [k for k in cond if k in OPS]
    want = cond[op]
    value = text_bytes if field == "$bytes" else lookup(record, field)
    present = value is not MISSING and value is not None
    if op == "exists":
        return present == want
    if not present:
        return False
    sample = want[0] if op in ("in", "not_in") else want
    if kind(value) != kind(sample):
        raise TypeMismatch("field '%s' is %s, compared with %s" % (field, kind(value), kind(sample)))
    # Python compares int with float exactly, and True == 1 never arises
    # here: both sides are of one kind.
    if op == "eq":
        return value == want
    if op == "ne":
        return value != want
    if op == "lt":
        return value < want
    if op == "le":
        return value <= want
    if op == "gt":
        return value > want
    if op == "ge":
        return value >= want
    if op == "in":
        return value in want
    return value not in want


def decide(cond, record, text_bytes):
    if "all" in cond:
        return all(decide(c, record, text_bytes) for c in cond["all"])  # stops at the first false
    if "any" in cond:
        return any(decide(c, record, text_bytes) for c in cond["any"])
    if "not" in cond:
        return not decide(cond["not"], record, text_bytes)
    return predicate(cond, record, text_bytes)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cond = json.load(f)
    text_field = sys.argv[3]
    with open(sys.argv[2], "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # a final newline ends the last record
    counts = {"read": 0, "passed": 0, "filtered": 0, "empty": 0, "kept": []}
    for number, line in enumerate(lines):
        counts["read"] += 1
        if line.strip(b" \t\r") == b"":
            counts["empty"] += 1
            continue
        record = json.loads(line.decode("utf-8"))
        text = lookup(record, text_field)
        if text is None or text == "":
            counts["empty"] += 1
            continue
        try:
            keep = decide(cond, record, len(text.encode("utf-8")))
        except TypeMismatch as e:
            print(json.dumps({"error": str(e), "record": number}))
            return 1
        if keep:
            counts["passed"] += 1
            counts["kept"].append(number)
        else:
            counts["filtered"] += 1
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
