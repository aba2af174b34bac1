"""Reading a blueprint: YAML with a source map (source), extends/include (compose), and the typed
model (parse: Document -> Blueprint with located findings).
"""
