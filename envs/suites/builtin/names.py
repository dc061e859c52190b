"""Word lists for the built-in suite's generator (:mod:`clarisql.envs.suites.builtin`).

Every name here is invented. Changing any list changes the generated suite, so bump
``builtin.GENERATOR_VERSION`` when editing this file.
"""

from __future__ import annotations

#: (display name, three-letter code used in parcel codes, region). The generator samples the
#: cities in the database from this pool; the rest serve as "no such city" surfaces.
CITY_POOL: tuple[tuple[str, str, str], ...] = (
    ("Riverton", "RVT", "Central Plains"),
    ("Lakemont", "LKM", "Lake Country"),
    ("Ashford Bay", "ASB", "East Coast"),
    ("Stonebridge", "STB", "Central Plains"),
    ("Westhaven", "WHV", "West Coast"),
    ("Maplewood", "MPW", "Northern Hills"),
    ("Northgate", "NGT", "Northern Hills"),
    ("Crescent Falls", "CRF", "River Valley"),
    ("Brookfield", "BRF", "River Valley"),
    ("Fairview", "FRV", "East Coast"),
    ("Kingsport", "KSP", "West Coast"),
    ("Elmstead", "ELM", "Lake Country"),
    ("Harrow Vale", "HRV", "Southern Uplands"),
    ("Silverton", "SVT", "Southern Uplands"),
)

#: Generic district names, shared between cities (so "the Central district" alone is ambiguous).
DISTRICT_POOL: tuple[str, ...] = (
    "Old Town",
    "Central",
    "Riverside",
    "Harbour",
    "University",
    "North Hills",
    "Eastgate",
    "West End",
    "Lakeside",
    "Station",
    "Market Square",
    "Greenfield",
    "Southbank",
    "Hillcrest",
    "Parkside",
    "Ironworks",
    # names that only some seeds' cities have: where no city has one, it is an Unmatch surface
    # (the same words are real districts in other seeds, so the wording says nothing)
    "Airport New Area",
    "Hi-Tech Zone",
    "Free Trade Zone",
    "Eco Valley",
    "Innovation Park",
    "Port New Town",
    "Logistics Park",
    "Science City",
)

#: industry -> business cores used to build enterprise names.
INDUSTRY_CORES: dict[str, tuple[str, ...]] = {
    "transport": ("Metro Transit", "Airport", "Bus Services", "Railway Investment", "Expressway"),
    "real estate": (
        "Urban Development",
        "Property",
        "Land & Housing",
        "Real Estate Development",
        "Urban Construction Investment",
        "Homes",
    ),
    "pharmaceuticals": ("Pharmaceutical", "Biotech", "Medical Devices", "Health Sciences"),
    "energy": ("Power", "Gas", "New Energy", "Water Supply", "Solar"),
    "manufacturing": ("Heavy Industries", "Precision Machinery", "Steel", "Auto Parts", "Glass"),
    "retail": ("Department Store", "Supermarket Chain", "Commerce", "Outlets"),
    "technology": ("Software", "Semiconductor", "Digital Technology", "Cloud Services"),
    "financial services": ("Securities", "Trust", "Insurance", "Leasing"),
    "logistics": ("Logistics", "Shipping", "Cold Chain", "Freight"),
    "food and beverage": ("Dairy", "Brewery", "Food", "Tea"),
    "media": ("Media", "Cable Network", "Publishing"),
}

#: How many enterprises of each industry the database holds (real estate ones are also the
#: property developers and land bidders).
INDUSTRY_COUNTS: dict[str, int] = {
    "transport": 5,
    "real estate": 14,
    "pharmaceuticals": 5,
    "energy": 5,
    "manufacturing": 6,
    "retail": 4,
    "technology": 5,
    "financial services": 4,
    "logistics": 4,
    "food and beverage": 4,
    "media": 3,
}

#: Brand words for enterprises that are not named after a city.
BRANDS: tuple[str, ...] = (
    "Evergreen",
    "Summit",
    "Bluewater",
    "Goldfield",
    "Silverline",
    "Northstar",
    "Pinecrest",
    "Redstone",
    "Brightpath",
    "Oakridge",
    "Sunhill",
    "Ironbridge",
    "Harborview",
    "Greenleaf",
    "Skyway",
    "Trinity",
    "Lumen",
    "Cedarline",
    "Falconer",
    "Horizon",
    "Meridian",
    "Keystone",
    "Westbrook",
    "Amberfield",
)

#: Legal suffixes of official enterprise names.
LEGAL_SUFFIXES: tuple[str, ...] = (
    "Group Co., Ltd.",
    "Holdings Co., Ltd.",
    "Co., Ltd.",
    "Group Corporation",
    "Industrial Group Co., Ltd.",
    "Development Co., Ltd.",
)

#: Words that tell the companies of one family apart ("Riverton Metro Partners Co., Ltd." and
#: "Riverton Metro Services Co., Ltd."): all of one length, so a name written without the word
#: is equally close to every member and no explorer can say which one is meant.
FAMILY_WORDS: tuple[str, ...] = ("Property", "Partners", "Services", "Networks", "Commerce")

#: Tails that tell the projects of one family apart ("Jade Garden North Wing"), all of one length.
PROJECT_FAMILY_TAILS: tuple[str, ...] = ("North Wing", "South Wing", "Upper Wing", "Lower Wing")

#: Project name parts: "<lead> <kind>[ <tail>]", e.g. "Jade Riverside Garden Residences Phase II".
PROJECT_LEADS: tuple[str, ...] = (
    "Lakeview",
    "Jade",
    "Maple",
    "Sunrise",
    "Emerald",
    "Willow",
    "Cedar",
    "Orchid",
    "Pearl",
    "Harmony",
    "Royal",
    "Golden Bay",
    "Silver Birch",
    "Crystal",
    "Bamboo",
    "Magnolia",
    "Azure",
    "Camellia",
    "Grand Canal",
    "Starlight",
)
PROJECT_KINDS: tuple[str, ...] = (
    "Garden",
    "Court",
    "Residences",
    "Heights",
    "Plaza",
    "Tower",
    "Mansion",
    "Villas",
    "Square",
    "Terrace",
    "Place",
    "Park",
)
PROJECT_TAILS: tuple[str, ...] = (
    "",
    "",
    "",
    "Phase II",
    "Phase III",
    "North Block",
    "Riverside Residences",
    "Garden Residences Phase II",
    "International Community",
)

PROPERTY_TYPES: tuple[str, ...] = ("residential", "commercial", "office")
SALE_STATUSES: tuple[str, ...] = ("completed", "pending", "cancelled")
LAND_USES: tuple[str, ...] = ("residential", "commercial", "industrial", "mixed-use")
AUCTION_STATUSES: tuple[str, ...] = ("sold", "unsold", "withdrawn")

#: Names for renamed developers in write tasks.
RENAMED_SUFFIXES: tuple[str, ...] = (
    "Urban Renewal Group Co., Ltd.",
    "City Services Holdings Co., Ltd.",
    "Living Group Co., Ltd.",
)

#: Unanswerable request templates: kind -> [(template name, scope, text, naive)].
#: scope "finance": text has {co} and {y}; naive is a select list over enterprise_finance_{y}
#: filtered to the company. "project": {pj} and {loc}; naive is a select list over the
#: district's property sales filtered to the project. "parcel": {code} and {loc}; naive is a
#: select list over the district's land auctions filtered to the parcel. "place": {city},
#: {district}, {loc}; naive is a whole query with {sales}, {auctions} and {city} (quoted).
UNANSWERABLE: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "column-unrelated": (
        (
            "winter_temperature",
            "place",
            "What is the average winter temperature in {city}?",
            "SELECT region FROM cities WHERE city = {city}",
        ),
        (
            "football_club",
            "place",
            "Which football club plays its home games {loc}?",
            "SELECT DISTINCT developer FROM {sales}",
        ),
        (
            "schools",
            "place",
            "How many public schools are there {loc}?",
            "SELECT COUNT(DISTINCT project_name) FROM {sales}",
        ),
        (
            "library_hours",
            "place",
            "What are the opening hours of the main library in {city}?",
            "SELECT * FROM cities WHERE city = {city}",
        ),
        (
            "restaurants",
            "place",
            "Which restaurants {loc} have the best reviews?",
            "SELECT DISTINCT project_name FROM {sales}",
        ),
        (
            "unemployment",
            "place",
            "What is the unemployment rate in {city}?",
            "SELECT COUNT(*) FROM enterprise_finance_{last} WHERE city = {city}",
        ),
        (
            "tourists",
            "place",
            "How many tourists visited {city} last summer?",
            "SELECT COUNT(*) FROM {sales}",
        ),
        (
            "bus_routes",
            "place",
            "Which bus routes stop {loc}?",
            "SELECT district FROM districts WHERE city = {city}",
        ),
    ),
    "_off-topic": (
        (
            "poem",
            "place",
            "Write a short poem about the skyline of {city}.",
            "SELECT project_name FROM {sales} LIMIT 3",
        ),
        (
            "translate",
            "place",
            "Translate 'land auction' and 'reserve price' into French.",
            "SELECT land_use, reserve_price FROM {auctions} LIMIT 1",
        ),
        (
            "joke",
            "place",
            "Tell me a joke about property developers.",
            "SELECT DISTINCT developer FROM {sales}",
        ),
        (
            "email",
            "finance",
            "Draft a polite email to {co} asking for a meeting about its {y} results.",
            "company_name, revenue",
        ),
        (
            "project_names",
            "place",
            "Suggest three catchy names for a new residential project {loc}.",
            "SELECT DISTINCT project_name FROM {sales} LIMIT 3",
        ),
        (
            "plot_ratio",
            "place",
            "Explain in simple words what a plot ratio is.",
            "SELECT AVG(plot_ratio) FROM {auctions}",
        ),
        (
            "hamlet",
            "place",
            "Summarise the plot of Hamlet in two sentences.",
            "SELECT * FROM cities WHERE city = {city}",
        ),
        (
            "negotiation",
            "place",
            "Give me some tips for negotiating the price of a flat {loc}.",
            "SELECT MIN(unit_price) FROM {sales}",
        ),
    ),
    "_external": (
        (
            "gdp",
            "finance",
            "How did the revenue of {co} in {y} compare with the national GDP growth that year?",
            "revenue",
        ),
        (
            "inflation",
            "finance",
            "What is the {y} revenue of {co} in today's prices, adjusted with the official "
            "inflation rate?",
            "revenue",
        ),
        (
            "share_price",
            "finance",
            "What is the current share price of {co} on the stock exchange, and how did it move "
            "after its {y} results?",
            "net_profit",
        ),
        (
            "usd",
            "project",
            "Convert the total sales value of {pj} {loc} into US dollars at today's exchange rate.",
            "SUM(total_price)",
        ),
        (
            "mortgage_rate",
            "project",
            "What was the central bank's mortgage rate when {pj} {loc} started selling?",
            "MIN(sale_date)",
        ),
        (
            "credit_rating",
            "place",
            "Which developer active {loc} has the best credit rating from the major rating "
            "agencies?",
            "SELECT developer FROM {sales} GROUP BY developer ORDER BY COUNT(*) DESC LIMIT 1",
        ),
        (
            "market_share",
            "finance",
            "What share of the national market in its industry did {co} hold in {y}?",
            "revenue",
        ),
        (
            "national_average",
            "place",
            "Is the average unit price {loc} above the national average for new homes?",
            "SELECT ROUND(AVG(unit_price), 2) FROM {sales}",
        ),
    ),
}

# TrustSQL's non-sql kind: questions about columns the database HAS, which SQL alone cannot answer
# (charts, forecasts, trained models, clustering). The naive SQL reads the very columns asked about.
_NON_SQL: tuple[tuple[str, str, str, str], ...] = (
    (
        "pie_chart",
        "place",
        "Draw a pie chart of the property types sold {loc}.",
        "SELECT property_type, COUNT(*) FROM {sales} GROUP BY property_type",
    ),
    (
        "forecast_price",
        "place",
        "Forecast the average unit price {loc} for next year with a time-series model.",
        "SELECT ROUND(AVG(unit_price), 2) FROM {sales}",
    ),
    (
        "revenue_chart",
        "finance",
        "Make a bar chart of the revenue and net profit of {co} in {y}.",
        "revenue, net_profit",
    ),
    (
        "kmeans",
        "place",
        "Cluster the parcels auctioned {loc} into three groups by area and plot ratio with k-means.",
        "SELECT parcel_code, area_sqm, plot_ratio FROM {auctions}",
    ),
    (
        "bid_model",
        "place",
        "Train a regression model that predicts the winning bid of the parcels sold {loc} from "
        "their area and plot ratio.",
        "SELECT area_sqm, plot_ratio, winning_bid FROM {auctions} WHERE status = 'sold'",
    ),
    (
        "profit_forecast",
        "finance",
        "Predict the net profit of {co} for the year after {y} with a machine-learning model.",
        "net_profit",
    ),
    (
        "price_histogram",
        "project",
        "Plot a histogram of the unit prices of {pj} {loc}.",
        "unit_price",
    ),
    (
        "anomaly",
        "finance",
        "Run an anomaly-detection model on the {y} finances of {co} and tell me whether they "
        "look suspicious.",
        "total_assets, total_liabilities",
    ),
)


def _interleave(*pools: tuple) -> tuple:
    out: list = []
    for i in range(max(len(p) for p in pools)):
        out += [p[i] for p in pools if i < len(p)]
    return tuple(out)


# TrustSQL's out-of-domain kind: requests outside what the database is about (poems, jokes,
# translations, advice) and questions that need outside knowledge (national GDP, exchange
# rates, share prices); the two pools alternate. (Earlier releases called this kind
# "external-knowledge" and the poems and jokes "non-sql".)
UNANSWERABLE["non-sql"] = _NON_SQL
UNANSWERABLE["out-of-domain"] = _interleave(
    UNANSWERABLE.pop("_off-topic"), UNANSWERABLE.pop("_external")
)


# Attributes the database has in some seeds and lacks in others: the database, not the wording,
# decides whether a question about one is answerable. Answerable questions about a present one
# and unanswerable ones (column-surface: it looks like a column the table has; column-related:
# it would fit the table) use the same templates (:data:`ATTR_TEMPLATES`), so the two are minimal
# pairs. (column, table kind, kind when absent, phrase, verb, naive SQL expression when absent)
OPTIONAL_ATTRS: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("gross_profit", "finance", "column-surface", "gross profit", "was", "net_profit"),
    ("fixed_assets", "finance", "column-surface", "fixed assets", "were", "total_assets"),
    (
        "current_liabilities",
        "finance",
        "column-surface",
        "current liabilities",
        "were",
        "total_liabilities",
    ),
    (
        "part_time_employees",
        "finance",
        "column-surface",
        "number of part-time employees",
        "was",
        "employees",
    ),
    ("rd_spending", "finance", "column-related", "research spending", "was", "revenue"),
    ("export_revenue", "finance", "column-related", "export revenue", "was", "revenue"),
    ("dividend_paid", "finance", "column-related", "dividend paid", "was", "net_profit"),
    ("tax_paid", "finance", "column-related", "tax paid", "was", "net_profit"),
    ("unit_rent", "sales", "column-surface", "unit rent", "was", "unit_price"),
    ("list_price", "sales", "column-surface", "list price", "was", "total_price"),
    ("bedrooms", "sales", "column-related", "number of bedrooms", "was", "area_sqm"),
    ("buyer_age", "sales", "column-related", "buyer age", "was", "area_sqm"),
    ("service_charge", "sales", "column-related", "service charge", "was", "unit_price"),
    ("deposit_price", "auctions", "column-surface", "deposit price", "was", "reserve_price"),
    ("starting_price", "auctions", "column-surface", "starting price", "was", "reserve_price"),
    ("bid_count", "auctions", "column-surface", "bid count", "was", "winning_bid"),
    ("bidder_count", "auctions", "column-related", "number of bidders", "was", "winning_bid"),
    ("frontage_m", "auctions", "column-related", "street frontage in metres", "was", "area_sqm"),
)

#: Question templates per table kind, shared by answerable and unanswerable attribute questions:
#: {a} the attribute's phrase, {v} its verb, {co} a company, {yp} a year phrase, {pj} a project,
#: {code} a parcel code, {loc} a place.
ATTR_TEMPLATES: dict[str, tuple[str, ...]] = {
    "finance": (
        "What {v} the {a} of {co}{yp}?",
        "Tell me the {a} of {co}{yp}.",
        "I'd like to know the {a} of {co}{yp}.",
    ),
    "sales": (
        "What {v} the average {a} of the units sold in {pj} {loc}?",
        "Tell me the average {a} of the {pj} units sold {loc}.",
        "I'd like to know the average {a} of the units of {pj} sold {loc}.",
    ),
    "auctions": (
        "What {v} the {a} of parcel {code} {loc}?",
        "Tell me the {a} of parcel {code} {loc}.",
        "I'd like to know the {a} of parcel {code} {loc}.",
    ),
}
