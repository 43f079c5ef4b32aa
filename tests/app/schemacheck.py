"""JSON Schema validation for the tests: the `jsonschema` package (draft 2020-12) when it is installed,
else a validator of the keywords docs/gpusolve-result.schema.json uses ($ref to #/$defs, type, const,
enum, required, properties, additionalProperties, items, minItems, minimum, minLength, pattern, allOf,
anyOf, oneOf). validator(schema) returns a function: object -> list of error messages ([] when valid)."""
import re

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def _own(schema):
    def resolve(ref):
        if not ref.startswith("#/"):
            raise ValueError(f"unsupported $ref {ref}")
        node = schema
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def check(s, v, path, errs):
        if "$ref" in s:
            check(resolve(s["$ref"]), v, path, errs)
        if "type" in s:
            types = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(_TYPES[t](v) for t in types):
                errs.append(f"{path}: {v!r:.80} is not of type {s['type']}")
                return
        if "const" in s and v != s["const"]:
            errs.append(f"{path}: {v!r:.80} is not {s['const']!r}")
        if "enum" in s and v not in s["enum"]:
            errs.append(f"{path}: {v!r:.80} is not one of {s['enum']}")
        if isinstance(v, dict):
            for k in s.get("required", []):
                if k not in v:
                    errs.append(f"{path}: '{k}' is a required property")
            props = s.get("properties", {})
            for k, sub in props.items():
                if k in v:
                    check(sub, v[k], f"{path}.{k}", errs)
            extra = s.get("additionalProperties")
            if isinstance(extra, dict):
                for k in v:
                    if k not in props:
                        check(extra, v[k], f"{path}.{k}", errs)
        if isinstance(v, list):
            if len(v) < s.get("minItems", 0):
                errs.append(f"{path}: fewer than {s['minItems']} items")
            if "items" in s:
                for i, item in enumerate(v):
                    check(s["items"], item, f"{path}[{i}]", errs)
        if isinstance(v, str):
            if len(v) < s.get("minLength", 0):
                errs.append(f"{path}: shorter than {s['minLength']}")
            if "pattern" in s and not re.search(s["pattern"], v):
                errs.append(f"{path}: {v!r:.80} does not match {s['pattern']}")
        if _TYPES["number"](v) and "minimum" in s and v < s["minimum"]:
            errs.append(f"{path}: {v} < {s['minimum']}")
        for sub in s.get("allOf", []):
            check(sub, v, path, errs)
        if "anyOf" in s and not any(not _errors(sub, v, path) for sub in s["anyOf"]):
            errs.append(f"{path}: matches none of anyOf")
        if "oneOf" in s:
            results = [_errors(sub, v, path) for sub in s["oneOf"]]
            matched = sum(1 for r in results if not r)
            if matched != 1:
                best = min(results, key=len) if results else []
                errs.append(f"{path}: matches {matched} of oneOf (closest: {'; '.join(best[:3])})")

    def _errors(s, v, path):
        errs = []
        check(s, v, path, errs)
        return errs

    return lambda obj: _errors(schema, obj, "$")


def validator(schema):
    try:
        import jsonschema  # noqa: F401
        from jsonschema import Draft202012Validator
    except ImportError:
        return _own(schema)
    v = Draft202012Validator(schema)
    return lambda obj: [f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}" for e in v.iter_errors(obj)]
