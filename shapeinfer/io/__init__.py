"""The protobuf and the file system: the wire layout of a model file (:mod:`.wire`), external
data (:mod:`.external`), the rules for the files a user names (:mod:`.userfiles`), message text
(:mod:`.modeltext`), reading a model and converting protobuf <-> facts (:mod:`.onnxio`), the
model forms the API takes (:mod:`.modelsource`), a model's ``value_info`` entries kept across a
rewrite (:mod:`.entries`) and the write, where the write contract's file rules are enforced
(:mod:`.writer`). Imports only :mod:`shapeinfer.symbolic` and :mod:`shapeinfer.base`."""
