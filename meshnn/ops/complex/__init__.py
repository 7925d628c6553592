"""ttnn's complex numbers: :class:`~meshnn.ops.complex.tensor.ComplexTensor` (a pair of real
tensors), the complex ops (:mod:`~meshnn.ops.complex.ops`: ``complex_tensor``, ``real``,
``imag``, ``angle``, ``conj``, ``polar``, ``is_real``, ``is_imag`` and the ComplexTensor forms of
``abs`` and ``reciprocal``) and the complex gradients (:mod:`~meshnn.ops.complex.grads`)."""
