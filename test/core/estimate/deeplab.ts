/**
 * torchvision's deeplabv3_resnet50 (ResNet-50 backbone with dilated layer3/layer4, ASPP head, FCN auxiliary
 * head) as tensor shapes with torchvision's state_dict names, and a layer-shape count of the activations
 * autograd keeps per sample. Used to write the seed-case fixture (a real architecture, not a made-up one).
 */
import type { TensorDef } from './helpers.js';

function bn(out: TensorDef[], name: string, c: number): void {
  for (const s of ['weight', 'bias', 'running_mean', 'running_var']) out.push({ name: `${name}.${s}`, dtype: 'F32', shape: [c] });
  out.push({ name: `${name}.num_batches_tracked`, dtype: 'I64', shape: [] });
}

function conv(out: TensorDef[], name: string, cout: number, cin: number, k: number, bias = false): void {
  out.push({ name: `${name}.weight`, dtype: 'F32', shape: [cout, cin, k, k] });
  if (bias) out.push({ name: `${name}.bias`, dtype: 'F32', shape: [cout] });
}

const LAYERS: Array<[number, number]> = [[64, 3], [128, 4], [256, 6], [512, 3]]; // planes, blocks

/** All tensors of deeplabv3_resnet50(num_classes, aux_loss) in state_dict order. */
export function deeplabV3Resnet50(numClasses = 21, aux = true): TensorDef[] {
  const t: TensorDef[] = [];
  conv(t, 'backbone.conv1', 64, 3, 7);
  bn(t, 'backbone.bn1', 64);
  let inplanes = 64;
  LAYERS.forEach(([planes, blocks], li) => {
    for (let b = 0; b < blocks; b++) {
      const p = `backbone.layer${li + 1}.${b}`;
      conv(t, `${p}.conv1`, planes, inplanes, 1);
      bn(t, `${p}.bn1`, planes);
      conv(t, `${p}.conv2`, planes, planes, 3);
      bn(t, `${p}.bn2`, planes);
      conv(t, `${p}.conv3`, planes * 4, planes, 1);
      bn(t, `${p}.bn3`, planes * 4);
      if (b === 0) {
        conv(t, `${p}.downsample.0`, planes * 4, inplanes, 1);
        bn(t, `${p}.downsample.1`, planes * 4);
      }
      inplanes = planes * 4;
    }
  });
  // DeepLabHead: ASPP (1×1 branch, three dilated 3×3 branches, image pooling branch, projection), 3×3, 1×1.
  conv(t, 'classifier.0.convs.0.0', 256, 2048, 1);
  bn(t, 'classifier.0.convs.0.1', 256);
  for (const i of [1, 2, 3]) {
    conv(t, `classifier.0.convs.${i}.0`, 256, 2048, 3);
    bn(t, `classifier.0.convs.${i}.1`, 256);
  }
  conv(t, 'classifier.0.convs.4.1', 256, 2048, 1);
  bn(t, 'classifier.0.convs.4.2', 256);
  conv(t, 'classifier.0.project.0', 256, 1280, 1);
  bn(t, 'classifier.0.project.1', 256);
  conv(t, 'classifier.1', 256, 256, 3);
  bn(t, 'classifier.2', 256);
  conv(t, 'classifier.4', numClasses, 256, 1, true);
  if (aux) {
    conv(t, 'aux_classifier.0', 256, 1024, 3);
    bn(t, 'aux_classifier.1', 256);
    conv(t, 'aux_classifier.4', numClasses, 256, 1, true);
  }
  return t;
}

/**
 * Bytes autograd keeps per sample for an H×W input at `bytesPerElement`, per part (stem, layer1…layer4,
 * heads). Each conv→BN→ReLU unit keeps two tensors of its output size (the conv output BN needs, and the
 * ReLU output that is also the next conv's input); the logits' log-softmax adds one fp32 map at full size.
 * With `checkpointed`, each bottleneck keeps only its input (torch.utils.checkpoint per block).
 */
export function deeplabActivationParts(height: number, width: number, bytesPerElement: number, checkpointed = false, numClasses = 21): Record<string, number> {
  const e = bytesPerElement;
  const s2 = (height / 2) * (width / 2);
  const s4 = (height / 4) * (width / 4);
  const s8 = (height / 8) * (width / 8);
  const parts: Record<string, number> = {};
  parts.stem = 3 * height * width * e + 2 * 64 * s2 * e + 64 * s4 * e; // input, conv-bn-relu, maxpool output
  const sizes = [s4, s8, s8, s8]; // layer1 at /4, layer2 /8, layer3 and layer4 dilated at /8
  let inplanes = 64;
  LAYERS.forEach(([planes, blocks], li) => {
    const hw = sizes[li] as number;
    let bytes = 0;
    for (let b = 0; b < blocks; b++) {
      const inHw = b === 0 && li === 1 ? s4 : hw;
      if (checkpointed) bytes += inplanes * inHw * e;
      else bytes += 2 * planes * hw * e * 2 + 2 * planes * 4 * hw * e + (b === 0 ? planes * 4 * hw * e : 0);
      inplanes = planes * 4;
    }
    parts[`layer${li + 1}`] = bytes;
  });
  let heads = 5 * 2 * 256 * s8 * e + 1280 * s8 * e; // five ASPP branches, their concatenation
  heads += 2 * 256 * s8 * e * 2; // projection and 3×3 conv units
  heads += 256 * s8 * e; // dropout output before the classifier
  heads += 2 * 256 * s8 * e; // auxiliary FCN head unit
  heads += 2 * numClasses * height * width * 4; // upsampled logits and fp32 log-softmax for the loss
  parts.heads = heads;
  return parts;
}

/** Backbone and heads totals of deeplabActivationParts. */
export function deeplabActivationBytes(height: number, width: number, bytesPerElement: number, numClasses = 21): { backboneBytes: number; headsBytes: number } {
  const p = deeplabActivationParts(height, width, bytesPerElement, false, numClasses);
  const headsBytes = p.heads as number;
  const backboneBytes = Object.values(p).reduce((a, b) => a + b, 0) - headsBytes;
  return { backboneBytes, headsBytes };
}
