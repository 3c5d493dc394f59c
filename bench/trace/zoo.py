"""A small model zoo for comparing the ops the tracer records with what CUDA dispatches (docs/estimate.md,
"CPU and CUDA dispatch: the op-log comparison"). Trains two steps of one model, tiny configs built locally:

    python bench/trace/zoo.py NAME [--amp]      NAME: resnet18 | bert | gpt2 | vit | llama | lstm

Run it under the tracer (gpumem estimate -- python bench/trace/zoo.py NAME, or with GPUMEM_ESTIMATE_TRACE set)
and list the trace's ops with bench/trace/zoo_ops.py.
"""
import sys

import torch


def build(name):
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(num_classes=10), "image"
    if name == "lstm":
        return torch.nn.LSTM(32, 64, num_layers=2, dropout=0.1, batch_first=True), "sequence"
    import transformers
    if name == "bert":
        cfg = transformers.BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=128, max_position_embeddings=128)
        return transformers.BertForMaskedLM(cfg), "tokens"
    if name == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128)
        return transformers.GPT2LMHeadModel(cfg), "tokens"
    if name == "llama":
        cfg = transformers.LlamaConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                       num_key_value_heads=2, intermediate_size=128, max_position_embeddings=128)
        return transformers.LlamaForCausalLM(cfg), "tokens"
    if name == "vit":
        cfg = transformers.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                                     image_size=32, patch_size=8, num_labels=10, hidden_dropout_prob=0.1,
                                     attention_probs_dropout_prob=0.1)
        return transformers.ViTForImageClassification(cfg), "image"
    raise SystemExit("unknown model %r" % name)


def main():
    name = sys.argv[1]
    amp = "--amp" in sys.argv
    model, kind = build(name)
    model = model.cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(3):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            if kind == "image":
                x = torch.randn(4, 3, 32, 32, device="cuda")
                out = model(x)
                logits = out if isinstance(out, torch.Tensor) else out.logits
                loss = torch.nn.functional.cross_entropy(logits, torch.randint(0, 10, (4,), device="cuda"))
            elif kind == "sequence":
                loss = model(torch.randn(4, 16, 32, device="cuda"))[0].float().pow(2).mean()
            else:
                ids = torch.randint(0, 1000, (4, 64), device="cuda")
                loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()
