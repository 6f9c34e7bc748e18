"""flash_ladder in other libraries' models.

    from flash_ladder.integrations import transformers as flash_transformers
    flash_transformers.register()   # attn_implementation="ladder" in Hugging Face transformers

Each integration is imported on its own, so that the library it plugs into is
needed only by those who use it.
"""
