"""The Nemotron-Cascade 2 chat template (RECIPE.md §2), as a Jinja string for ``tokenizer.chat_template``.

- ChatML: ``<|im_start|>{role}\\n ... <|im_end|>\\n``.
- Thinking mode: the assistant turn starts ``<think>\\n``; instruct mode: an empty ``<think></think>``.
  Chosen with ``apply_chat_template(..., enable_thinking=True|False)`` (default True).
- History: assistant turns before the last user turn are re-rendered with an empty ``<think></think>`` and only
  their final answer (text after ``</think>``); turns after the last user turn keep their reasoning
  (``reasoning_content``, or a ``<think>...</think>`` prefix of ``content``).
- Tools are declared in the system prompt inside ``<tools>...</tools>``; calls are emitted in the Qwen3-Coder XML
  style ``<tool_call><function=NAME><parameter=P>value</parameter></function></tool_call>``.
- There is no ``tool`` role: tool results go back as a ``user`` turn wrapped in ``<tool_response>...</tool_response>``.

Rendering without a tokenizer: ``recipe.model.chat_render``.
"""

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
SPECIAL_TOKENS = ["<pad>", "<|im_start|>", "<|im_end|>", THINK_OPEN, THINK_CLOSE, "<tool_call>", "</tool_call>",
                  "<tools>", "</tools>", "<tool_response>", "</tool_response>"]

CHAT_TEMPLATE = r"""
{%- macro render_tool_call(tc) -%}
{%- set f = tc.function if tc.function is defined else tc -%}
<tool_call><function={{ f.name }}>
{%- set args = f.arguments if f.arguments is defined else {} -%}
{%- if args is mapping -%}{%- for k, v in args.items() -%}<parameter={{ k }}>{{ v if v is string else (v | tojson) }}</parameter>{%- endfor -%}{%- else -%}{{ args }}{%- endif -%}
</function></tool_call>
{%- endmacro -%}
{%- macro answer_only(text) -%}
{%- if '</think>' in text -%}{{ text.split('</think>')[-1].lstrip() }}{%- else -%}{{ text }}{%- endif -%}
{%- endmacro -%}
{%- set ns = namespace(last_user=-1, system='') -%}
{%- for m in messages -%}
{%- if m.role == 'user' or m.role == 'tool' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}
{%- endfor -%}
{%- if messages and messages[0].role == 'system' -%}{%- set ns.system = messages[0].content -%}{%- endif -%}
{%- if tools -%}
{%- set ns.system = ns.system ~ ('\n\n' if ns.system else '') ~ '<tools>' -%}
{%- for t in tools -%}
{%- set f = t.function if t.function is defined else t -%}
{%- set ns.system = ns.system ~ '<function><name>' ~ f.name ~ '</name><description>' ~ (f.description or '') ~ '</description><parameters>' -%}
{%- if f.parameters is defined and f.parameters.properties is defined -%}
{%- for pname, p in f.parameters.properties.items() -%}
{%- set ns.system = ns.system ~ '<parameter><name>' ~ pname ~ '</name><type>' ~ (p.type or 'string') ~ '</type><description>' ~ (p.description or '') ~ '</description></parameter>' -%}
{%- endfor -%}
{%- endif -%}
{%- set ns.system = ns.system ~ '</parameters></function>' -%}
{%- endfor -%}
{%- set ns.system = ns.system ~ '</tools>' -%}
{%- endif -%}
{%- if ns.system -%}<|im_start|>system
{{ ns.system }}<|im_end|>
{% endif -%}
{%- for m in messages -%}
{%- if m.role == 'system' -%}
{%- elif m.role == 'user' -%}<|im_start|>user
{{ m.content }}<|im_end|>
{% elif m.role == 'tool' -%}<|im_start|>user
<tool_response>{{ m.content }}</tool_response><|im_end|>
{% elif m.role == 'assistant' -%}
{%- set content = m.content or '' -%}
{%- if m.reasoning_content is defined and m.reasoning_content is not none -%}
{%- set reasoning = m.reasoning_content -%}
{%- elif '</think>' in content -%}
{%- set reasoning = content.split('</think>')[0].replace('<think>', '').strip() -%}
{%- else -%}{%- set reasoning = none -%}{%- endif -%}
{%- set content = answer_only(content) -%}
<|im_start|>assistant
{% if loop.index0 > ns.last_user and reasoning is not none and reasoning != '' -%}
<think>
{{ reasoning }}
</think>
{{ content }}
{%- else -%}
<think></think>{{ content }}
{%- endif -%}
{%- if m.tool_calls is defined and m.tool_calls -%}{%- for tc in m.tool_calls -%}{{ render_tool_call(tc) }}{%- endfor -%}{%- endif -%}
<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<|im_start|>assistant
{% if enable_thinking is defined and enable_thinking is false %}<think></think>{% else %}<think>
{% endif -%}
{%- endif -%}
""".strip()
