# The public names of sitecrawl.parse, each once (its __init__.py serves them lazily).

from ._chunks import Chunk as Chunk
from ._chunks import chunks as chunks
from ._chunks import count_tokens as count_tokens
from ._content import require_markdown as require_markdown
from ._css import css_urls as css_urls
from ._css import stylesheet_urls as stylesheet_urls
from ._decode import decode_html as decode_html
from ._extract import Extracted as Extracted
from ._extraction import Extraction as Extraction
from ._extraction import Rule as Rule
from ._extraction import convert as convert
from ._extraction import load_rules_file as load_rules_file
from ._extraction import parse_specs as parse_specs
from ._extraction import stored_rules as stored_rules
from ._extras import pdf_available as pdf_available
from ._pdf import PdfText as PdfText
from ._pdf import read_pdf as read_pdf
from ._pool import Parser as Parser
from ._requisites import srcset_urls as srcset_urls
from ._signature import NPERM as NPERM
from ._signature import content_signature as content_signature
from ._signature import similarity as similarity
from ._structured import schema_org_context as schema_org_context
from ._structured import short_type as short_type
from ._structured import type_names as type_names
