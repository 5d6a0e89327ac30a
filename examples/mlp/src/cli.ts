// Placeholder until the MNIST example lands (issue: examples/mlp): it will train a
// 784-128-10 MLP on 8,000 real MNIST digits with Adam and report test accuracy.
console.log('surf mlp: the MNIST MLP example is not built yet. It will train a 784-128-10 ReLU MLP on real MNIST digits (WebGPU when an adapter exists, else the CPU backend) and save the model as safetensors.');
