/**
 * A minimal ONNX model writer (protobuf wire format by hand), so the onnxruntime peer can run
 * graphs the bench builds in code: a matmul, and one whole SGD training step of an MLP
 * written out as forward + backward + update. Field numbers are those of onnx.proto.
 */
type Bytes = number[];

const varint = (v: number): Bytes => {
  const out: Bytes = [];
  let x = BigInt.asUintN(64, BigInt(v));
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x !== 0n) b |= 0x80;
    out.push(b);
  } while (x !== 0n);
  return out;
};
const key = (field: number, wire: number): Bytes => varint((field << 3) | wire);
const int = (field: number, v: number): Bytes => [...key(field, 0), ...varint(v)];
const bytes = (field: number, b: Bytes | Uint8Array): Bytes => [...key(field, 2), ...varint(b.length), ...b];
const str = (field: number, s: string): Bytes => bytes(field, [...new TextEncoder().encode(s)]);
const f32 = (field: number, v: number): Bytes => [...key(field, 5), ...new Uint8Array(Float32Array.of(v).buffer)];

export const FLOAT = 1;
export const INT64 = 7;

export type Attr = { name: string } & ({ f: number } | { i: number } | { ints: number[] });

export interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  attrs?: Attr[];
}

function attribute(a: Attr): Bytes {
  // AttributeProto: name 1, f 2, i 3, ints 8, type 20 (FLOAT 1, INT 2, INTS 7).
  if ('f' in a) return [...str(1, a.name), ...f32(2, a.f), ...int(20, 1)];
  if ('i' in a) return [...str(1, a.name), ...int(3, a.i), ...int(20, 2)];
  return [...str(1, a.name), ...a.ints.flatMap((v) => int(8, v)), ...int(20, 7)];
}

function node(n: Node, i: number): Bytes {
  // NodeProto: input 1, output 2, name 3, op_type 4, attribute 5.
  return [
    ...n.inputs.flatMap((s) => str(1, s)),
    ...n.outputs.flatMap((s) => str(2, s)),
    ...str(3, `n${i}`),
    ...str(4, n.op),
    ...(n.attrs ?? []).flatMap((a) => bytes(5, attribute(a))),
  ];
}

function valueInfo(name: string, shape: number[], elemType = FLOAT): Bytes {
  // ValueInfoProto{name 1, type 2}; TypeProto{tensor_type 1}; Tensor{elem_type 1, shape 2}; Shape{dim 1}; Dim{dim_value 1}.
  const dims = shape.flatMap((d) => bytes(1, int(1, d)));
  return [...str(1, name), ...bytes(2, bytes(1, [...int(1, elemType), ...bytes(2, dims)]))];
}

/** A constant tensor (TensorProto: dims 1, data_type 2, name 8, raw_data 9). */
export interface Const {
  name: string;
  dims: number[];
  type: typeof FLOAT | typeof INT64;
  values: number[];
}

function tensor(c: Const): Bytes {
  const raw =
    c.type === FLOAT
      ? new Uint8Array(Float32Array.from(c.values).buffer)
      : new Uint8Array(BigInt64Array.from(c.values.map((v) => BigInt(v))).buffer);
  return [...c.dims.flatMap((d) => int(1, d)), ...int(2, c.type), ...str(8, c.name), ...bytes(9, raw)];
}

export interface Graph {
  nodes: Node[];
  inputs: { name: string; shape: number[] }[];
  outputs: { name: string; shape: number[] }[];
  consts?: Const[];
}

/** ModelProto bytes: IR version 8, default-domain opset 13. */
export function modelBytes(g: Graph): Uint8Array {
  // GraphProto: node 1, name 2, initializer 5, input 11, output 12.
  const graph = [
    ...g.nodes.flatMap((n, i) => bytes(1, node(n, i))),
    ...str(2, 'surf-bench'),
    ...(g.consts ?? []).flatMap((c) => bytes(5, tensor(c))),
    ...g.inputs.flatMap((v) => bytes(11, valueInfo(v.name, v.shape))),
    ...g.outputs.flatMap((v) => bytes(12, valueInfo(v.name, v.shape))),
  ];
  // ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8 (OperatorSetIdProto: domain 1, version 2).
  return new Uint8Array([...int(1, 8), ...str(2, 'surf-bench'), ...bytes(7, graph), ...bytes(8, int(2, 13))]);
}
