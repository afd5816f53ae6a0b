"""Plain-words errors for MCP tool arguments the schema refuses.

The SDK reports them as pydantic's text ("1 validation error for searchArguments … https://
errors.pydantic.dev/…"); an agent needs the argument, what it must be, and what it sent:
"search needs 'query' (a string)".
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

_TYPES = {"string": "a string", "integer": "an integer", "number": "a number",
          "boolean": "true or false", "array": "a list", "object": "an object"}


def expected(schema: dict[str, Any], bounds: bool = True) -> str:
    """What a value of this JSON schema is, in words ("an integer from 1 to 200")."""
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    options = [{"description": schema.get("description"), **s}
               for s in schema.get("anyOf", ()) if s.get("type") != "null"]
    if options:
        return " or ".join(expected(s, bounds) for s in options)
    text = _TYPES.get(schema.get("type", ""), "a value")
    if not bounds:
        return text
    low = schema.get("minimum", schema.get("minLength"))
    high = schema.get("maximum", schema.get("maxLength"))
    unit = " characters" if schema.get("type") == "string" else ""
    if low is not None and high is not None:
        text += f" of {low} to {high}{unit}" if unit else f" from {low} to {high}"
    elif low is not None:
        text += f" of at least {low}{unit}" if unit else f" of at least {low}"
    elif high is not None:
        text += f" of at most {high}{unit}" if unit else f" of at most {high}"
    if "pattern" in schema and schema.get("description"):
        text += f" in the form {schema['description']}"
    return text


def argument_message(tool: str, error: ValidationError, input_schema: dict[str, Any]) -> str:
    """One sentence per refused argument: which, what it must be, what was sent."""
    properties = input_schema.get("properties", {})
    sentences = []
    for problem in error.errors():
        name = ".".join(str(part) for part in problem["loc"]) or "arguments"
        top = str(problem["loc"][0]) if problem["loc"] else ""
        schema = properties.get(top, {})
        if len(problem["loc"]) > 1 and "items" in schema:      # one item of a list
            schema = schema["items"]
        if problem["type"] == "missing":
            sentences.append(f"{tool} needs '{name}' ({expected(schema, bounds=False)}).")
        elif top not in properties:
            sentences.append(f"{tool} takes no argument '{name}'; it takes "
                             f"{', '.join(map(repr, properties)) or 'none'}.")
        else:
            sent = repr(problem.get("input"))
            sent = sent if len(sent) <= 60 else sent[:57] + "..."
            sentences.append(f"{tool}: '{name}' must be {expected(schema)}, not {sent}.")
    return " ".join(sentences)


class PlainArgumentsServer(MCPServer):
    """An MCPServer whose refused-argument errors read as ``argument_message`` says."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None
                        ) -> Any:
        """Call a tool; a ValidationError of its arguments becomes a plain ToolError, and so
        does an argument the tool does not have (a misspelt filter is not ignored)."""
        schema = await self._input_schema(name)
        unknown = sorted(set(arguments or {}) - set(schema.get("properties", {})))
        if schema and unknown:
            raise ToolError(" ".join(
                f"{name} takes no argument '{key}'; it takes "
                f"{', '.join(map(repr, schema.get('properties', {}))) or 'none'}."
                for key in unknown))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            raise ToolError(argument_message(name, cause, schema)) from cause

    async def _input_schema(self, name: str) -> dict[str, Any]:
        """The input schema of tool ``name`` ({} for an unknown tool), listed once."""
        schemas = getattr(self, "_input_schemas", None)
        if schemas is None or name not in schemas:
            schemas = self._input_schemas = {t.name: t.input_schema
                                             for t in await self.list_tools()}
        return schemas.get(name, {})
