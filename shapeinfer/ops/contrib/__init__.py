"""Native rules for onnxruntime's contrib ops (com.microsoft, com.microsoft.nchwc), one module per
family; importing this package registers them all."""

from shapeinfer.ops.contrib import (  # noqa: F401
    nchwc,
    quantization,
    quantized_attention,
)
