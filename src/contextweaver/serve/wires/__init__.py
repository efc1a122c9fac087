"""The wires: a request's body read into a conversation, and the woven one written back in its shape.

One module per wire (wire: chat completions and the `Wire` contract; anthropic: messages; responses:
the Responses API), the conversation they share (conversation, converted), the error shape per path
(shapes).
"""
