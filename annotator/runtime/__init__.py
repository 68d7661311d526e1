"""How the model computes on the hardware at hand: device and precision, ONNX Runtime int8, and cancelling the
linking of a document nobody waits for."""
